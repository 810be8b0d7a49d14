import type { Authentication } from '../../../src/core/authentication.js';
import type { Client } from '../../../src/core/clients/client.js';
import { clientRecord } from '../../helpers/client-record.js';
import type { Customer } from '../../../src/core/customers/customer.js';
import type { SigningKeyRecord } from '../../../src/core/keys/signing-key.js';
import type { AuthorizationCodeRecord } from '../../../src/core/codes/authorization-code.js';
import type { AuthorizationRequestRecord, CustomerSessionRecord } from '../../../src/core/journey/records.js';
import type { OtpChallengeRecord } from '../../../src/core/otp/records.js';
import type { TokenSessionRecord } from '../../../src/core/tokens/records.js';
import type { Storage } from '../../../src/core/storage/storage.js';

/** Opens a fresh, empty storage for one test, and disposes of it afterwards. */
export interface StorageFactory {
  open(): Promise<Storage>;
  dispose?(storage: Storage): Promise<void>;
}

/** The time the fixtures are set at, in seconds since the epoch. */
export const T = 1_767_225_600;

/** The storage the running test of the contract works on: opened and migrated before each test. */
export interface StorageUnderTest {
  storage: Storage;
}

/** A consumer client of the fixtures, `overrides` applied. */
export function client(overrides: Partial<Client> = {}): Client {
  return clientRecord({ id: 'cid_sandbox_contract', name: 'Acme', secretHash: 'hash-1', redirectUri: 'https://acme.example/callback', ...overrides });
}

/** An active signing key of the fixtures, `overrides` applied. */
export function key(overrides: Partial<SigningKeyRecord> = {}): SigningKeyRecord {
  return {
    kid: 'kid-1',
    alg: 'ES256',
    use: 'sig',
    status: 'active',
    publicJwk: '{"kty":"EC"}',
    sealedPrivateJwk: 'sealed',
    createdAt: T,
    generation: 1,
    activatesAt: T,
    retiredAt: null,
    verifyUntil: null,
    ...overrides,
  };
}

/** An active customer of the fixtures, `overrides` applied. */
export function customer(overrides: Partial<Customer> = {}): Customer {
  return {
    profileId: '123456789012',
    mobile: '+639171234567',
    name: 'Juan dela Cruz',
    pinHash: 'scrypt$32768$8$1$salt$hash',
    status: 'active',
    pinAttempts: 0,
    lockedUntil: null,
    credentialVersion: 0,
    createdAt: T,
    updatedAt: T,
    ...overrides,
  };
}

/** A pending authorization request of the fixtures, `overrides` applied. */
export function authorizationRequest(overrides: Partial<AuthorizationRequestRecord> = {}): AuthorizationRequestRecord {
  return {
    idHash: 'request-1',
    clientId: 'cid_sandbox_contract',
    redirectUri: 'https://acme.example/callback',
    state: 'xyz',
    codeChallenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    loginHint: '+639171234567',
    browserHash: 'browser-1',
    createdAt: T,
    expiresAt: T + 900,
    completedAt: null,
    endedBy: null,
    status: 'pending',
    profileId: null,
    uiLocale: 'fil',
    scopes: ['payments:read', 'profile'],
    acrValues: ['phr', 'urn:connect:acr:pin-sms'],
    maxAge: 300,
    dpopJkt: 'NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs',
    ...overrides,
  };
}

/** A login one-time PIN challenge of the fixtures, `overrides` applied. */
export function challenge(overrides: Partial<OtpChallengeRecord> = {}): OtpChallengeRecord {
  return {
    id: 'challenge-1',
    requestHash: 'request-1',
    purpose: 'login',
    mobile: '+639171234567',
    profileId: '123456789012',
    pendingPinHash: null,
    codeHash: 'code-hash-1',
    attempts: 0,
    resends: 0,
    lastSentAt: T,
    expiresAt: T + 300,
    createdAt: T,
    consumedAt: null,
    ...overrides,
  };
}

/** How the customer of the fixtures signed in: PIN + SMS, 5 seconds before T. */
export const SIGN_IN: Authentication = { acr: 'urn:connect:acr:pin-sms', amr: ['pin', 'sms', 'mfa'], authTime: T - 5 };

/** A customer session of the fixtures, `overrides` applied. */
export function customerSession(overrides: Partial<CustomerSessionRecord> = {}): CustomerSessionRecord {
  return {
    idHash: 'session-1',
    profileId: '123456789012',
    createdAt: T,
    lastSeenAt: T,
    expiresAt: T + 43_200,
    endedAt: null,
    authentication: SIGN_IN,
    ...overrides,
  };
}

/** What `authorizationCode()` was issued for: its redirect URI, no PKCE challenge. */
export const BINDING = { redirectUri: 'https://acme.example/callback', codeChallenge: null };

/** An unredeemed authorization code of the fixtures, `overrides` applied. */
export function authorizationCode(overrides: Partial<AuthorizationCodeRecord> = {}): AuthorizationCodeRecord {
  return {
    codeHash: 'code-1',
    clientId: 'cid_sandbox_contract',
    redirectUri: 'https://acme.example/callback',
    profileId: '123456789012',
    codeChallenge: null,
    createdAt: T,
    expiresAt: T + 300,
    consumedAt: null,
    scopes: ['payments:read', 'profile'],
    authentication: SIGN_IN,
    dpopJkt: 'NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs',
    ...overrides,
  };
}

/** A token session of the fixtures, `overrides` applied. */
export function tokenSession(overrides: Partial<TokenSessionRecord> = {}): TokenSessionRecord {
  return {
    sid: 'sid-1',
    clientId: 'cid_sandbox_contract',
    profileId: '123456789012',
    codeHash: 'code-1',
    refreshJti: 'refresh-jti-1',
    accessJti: 'access-jti-1',
    createdAt: T,
    refreshExpiresAt: T + 604_800,
    accessExpiresAt: T + 3600,
    revokedAt: null,
    authentication: SIGN_IN,
    dpopJkt: 'NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs',
    ...overrides,
  };
}

/** Runs `count` calls of `work` at once. */
export function concurrently<R>(count: number, work: (index: number) => Promise<R>): Promise<R[]> {
  return Promise.all(Array.from({ length: count }, (_, index) => work(index)));
}
