import type { Clock } from '../../../src/core/clock.js';
import type { DpopProofDeps } from '../../../src/core/dpop/dpop-proof.js';
import { createDpopNonces } from '../../../src/core/dpop/dpop-nonce.js';
import { randomBytes } from 'node:crypto';
import { createAuditLog } from '../../../src/core/audit/audit-log.js';
import type { Client } from '../../../src/core/clients/client.js';
import { fixedClock, type FixedClock } from '../../../src/core/clock.js';
import { pinSmsAuthentication } from '../../../src/core/authentication.js';
import { KeyRing } from '../../../src/core/keys/key-ring.js';
import { deriveKey } from '../../../src/core/keys/master-key.js';
import type { RefreshDeps } from '../../../src/core/grants/refresh-token.js';
import { mintCustomerAccessToken, mintRefreshToken } from '../../../src/core/tokens/customer-tokens.js';
import type { Storage } from '../../../src/core/storage/storage.js';
import { clientRecord } from '../../helpers/client-record.js';
import { memoryStorage, T0 } from '../otp/otp-fixtures.js';

export { T0 };

/** How the customer of `openSession` signed in: PIN + SMS, 10 s before T0. */
export const SIGN_IN = pinSmsAuthentication(T0 - 10, 'sign_in_otp');

export const URLS = { authUrl: 'https://auth.connect.test', baseUrl: 'https://api.connect.test' } as const;
function client(id: string): Client {
  return clientRecord({
    id,
    name: id,
    redirectUri: 'https://acme.example/callback',
    grants: ['client_credentials', 'authorization_code', 'refresh_token'],
    createdAt: T0,
    updatedAt: T0,
  });
}

export const ACME = client('cid_sandbox_acme');
export const OTHER = client('cid_sandbox_other');
export const PROFILE_ID = '123456789012';

/** The tokens of one session, as the authorization code grant would have made them. */
export interface SessionTokens {
  readonly sid: string;
  readonly accessToken: string;
  readonly accessJti: string;
  readonly refreshToken: string;
  readonly refreshJti: string;
}

/** A fresh in-memory database and key ring at T0, with access tokens of 3600 s and refresh tokens of 86,400 s. */
export async function tokenSetup(): Promise<{
  storage: Storage;
  clock: FixedClock;
  keys: KeyRing;
  /** The key the key ring's private keys are sealed with. */
  sealKey: Uint8Array;
  deps: RefreshDeps;
  /** Opens a token session of `client` for `profileId`, granted `scopes` (none by default). */
  openSession(client?: Client, profileId?: string, scopes?: readonly string[]): Promise<SessionTokens>;
}> {
  const storage = await memoryStorage();
  const clock = fixedClock(T0);
  const sealKey = deriveKey(randomBytes(32), 'key-sealing');
  const keys = await KeyRing.open({ keys: storage.keys, sealKey, clock });
  const deps: RefreshDeps = {
    keys,
    clock,
    urls: URLS,
    lifetimes: { accessTokenSeconds: 3600, refreshTokenSeconds: 86_400 },
    tokenSessions: storage.tokenSessions,
    audit: createAuditLog(storage.audit, clock),
  };
  return {
    storage,
    clock,
    keys,
    sealKey,
    deps,
    async openSession(client = ACME, profileId = PROFILE_ID, scopes: readonly string[] = []) {
      const sid = randomBytes(16).toString('base64url');
      const subject = { profileId, clientId: client.id, sid, scopes, authentication: SIGN_IN };
      const access = await mintCustomerAccessToken(subject, deps);
      const refresh = await mintRefreshToken(subject, deps);
      await storage.tokenSessions.insertTokenSession({
        sid,
        clientId: client.id,
        profileId,
        codeHash: null,
        refreshJti: refresh.jti,
        accessJti: access.jti,
        createdAt: clock.nowSeconds(),
        refreshExpiresAt: refresh.expiresAt,
        accessExpiresAt: access.expiresAt,
        revokedAt: null,
        authentication: SIGN_IN,
      });
      return { sid, accessToken: access.token, accessJti: access.jti, refreshToken: refresh.token, refreshJti: refresh.jti };
    },
  };
}

/** The rejection of `promise`; fails when it resolves. */
export async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    (value) => {
      throw new Error(`expected a rejection, got ${JSON.stringify(value)}`);
    },
    (error: unknown) => error,
  );
}

/** DPoP proof checks on `clock`, recording proof jtis in `storage`'s replay store, with a fresh nonce key. */
export function dpopDeps(clock: Clock, storage: Pick<Storage, 'usedJtis'>): DpopProofDeps {
  return { clock, replay: storage.usedJtis, nonces: createDpopNonces(randomBytes(32), clock) };
}
