import { testAddress } from '../../helpers/addresses.js';
import type { ClientAddress } from '../../../src/core/client-address.js';
import { createAuditLog } from '../../../src/core/audit/audit-log.js';
import { randomBytes, randomUUID } from 'node:crypto';
import { afterEach } from 'vitest';
import { fixedClock, type FixedClock } from '../../../src/core/clock.js';
import { deliverOtp, newChallenge, type ChallengeInput, type ResendOtpDeps } from '../../../src/core/otp/issue-otp.js';
import { OtpHasher } from '../../../src/core/otp/otp-hasher.js';
import type { SendLimiter } from '../../../src/core/limits/send-limiter.js';
import type { MakeEntry, VerifyOtpDeps } from '../../../src/core/otp/verify-otp.js';
import type { SignInCompletion } from '../../../src/core/journey/stores.js';
import { OTP_MAX_ATTEMPTS } from '../../../src/core/lifetimes.js';
import { SmsDeliveryFailed, type SmsMessage, type SmsSender } from '../../../src/core/sms/sms-sender.js';
import { openStorage } from '../../../src/storage/kysely/open-storage.js';
import type { Storage } from '../../../src/core/storage/storage.js';

/** 2026-01-01T00:00:00Z. */
export const T0 = 1_767_225_600;

/** An SMS sender that keeps what it was asked to send, and can be told to fail. */
export interface RecordingSender extends SmsSender {
  readonly messages: SmsMessage[];
  /** When set, `send` records the message, then throws this. */
  failWith: Error | undefined;
  /** The 6-digit code of the last message. */
  lastCode(): string;
}

export function recordingSender(): RecordingSender {
  const sender: RecordingSender = {
    messages: [],
    failWith: undefined,
    async send(message) {
      sender.messages.push(message);
      if (sender.failWith) throw sender.failWith;
    },
    lastCode() {
      const body = sender.messages.at(-1)?.body ?? '';
      const match = /^(\d{6}) /.exec(body);
      if (!match?.[1]) throw new Error(`no code in ${JSON.stringify(body)}`);
      return match[1];
    },
  };
  return sender;
}

/** A limiter that never refuses, and remembers what it was asked. */
export function openLimiter(): SendLimiter & { calls: Array<[string, ClientAddress]> } {
  const calls: Array<[string, ClientAddress]> = [];
  return {
    calls,
    async take(mobile, ip) {
      calls.push([mobile, ip]);
      return undefined;
    },
    async giveBack() {},
  };
}

export const smsDown = () => new SmsDeliveryFailed('SMS not delivered: gateway unreachable');

const opened: Storage[] = [];
afterEach(async () => {
  for (const storage of opened.splice(0)) await storage.close();
});

/** A migrated in-memory SQLite storage, closed after the test. */
export async function memoryStorage(): Promise<Storage> {
  const storage = openStorage({ engine: 'sqlite', path: ':memory:' });
  opened.push(storage);
  await storage.migrate();
  return storage;
}

/** Everything issuing and checking one-time PINs needs, on a fresh database at T0. */
export async function otpSetup(sends: SendLimiter = openLimiter()): Promise<{
  storage: Storage;
  clock: FixedClock;
  sms: RecordingSender;
  hasher: OtpHasher;
  deps: ResendOtpDeps & VerifyOtpDeps;
}> {
  const storage = await memoryStorage();
  const clock = fixedClock(T0);
  const sms = recordingSender();
  const hasher = new OtpHasher(randomBytes(32));
  const audit = createAuditLog(storage.audit, clock);
  return { storage, clock, sms, hasher, deps: { challenges: storage.otpChallenges, hasher, sms, audit, sends, clock } };
}

/** A login challenge for `+639171234567` from "Acme Shop". */
export const LOGIN = {
  requestHash: 'request-hash-1',
  purpose: 'login',
  mobile: '+639171234567',
  profileId: '123456789012',
  pendingPinHash: null,
} as const;

/** Who asks for the codes of {@link LOGIN}: the client's name and the customer's address. */
export const CONTEXT = { clientId: 'acme', clientName: 'Acme Shop', address: testAddress('203.0.113.7'), profileId: '123456789012', locale: 'en', authHost: 'auth.connect.test' } as const;

/**
 * Issues a challenge as the journey does: made, stored, then its code sent
 * by SMS. Returns its ID, its code and whether the gateway took it.
 */
export async function issueChallenge(
  input: ChallengeInput,
  setup: { storage: Storage; clock: FixedClock; sms: SmsSender; hasher: OtpHasher },
): Promise<{ id: string; code: string; delivered: boolean }> {
  const { record, code } = newChallenge(input, { hasher: setup.hasher, clock: setup.clock });
  await setup.storage.otpChallenges.insertOtpChallenge(record);
  const delivered = await deliverOtp(input.mobile, code, CONTEXT, { sms: setup.sms, audit: createAuditLog(setup.storage.audit, setup.clock) });
  return { id: record.id, code, delivered };
}

/**
 * Makes entries of a challenge the way the journey does
 * (`SignInStore.enterOtp`: counted and compared in one step, a right one
 * using the challenge up as it completes the sign-in). {@link awaitEntries}
 * stores the journey and the customer a right entry completes.
 */
export function entriesOf(storage: Storage, challenge: { id: string; requestHash: string }): MakeEntry<SignInCompletion> {
  return (codeHashes, now) =>
    storage.signIns.enterOtp({
      idHash: challenge.requestHash,
      challengeId: challenge.id,
      codeHashes,
      now,
      maxAttempts: OTP_MAX_ATTEMPTS,
      customer: { profileId: LOGIN.profileId },
      endSessionHash: null,
      session: { idHash: randomUUID(), profileId: LOGIN.profileId, createdAt: now, lastSeenAt: now, expiresAt: now + 3600, endedAt: null, authentication: null },
      consent: { profileId: LOGIN.profileId, clientId: 'acme', approvedAt: now },
      code: { codeHash: randomUUID(), clientId: 'acme', redirectUri: 'https://acme.example/cb', profileId: LOGIN.profileId, codeChallenge: null, createdAt: now, expiresAt: now + 60, consumedAt: null, scopes: [], authentication: null },
    });
}

/** Stores the customer of {@link LOGIN} (once) and a journey awaiting its one-time PIN for each of `requestHashes`. */
export async function awaitEntries(storage: Storage, ...requestHashes: string[]): Promise<void> {
  if (!(await storage.customers.findCustomer(LOGIN.profileId))) {
    await storage.customers.insertCustomer({
      profileId: LOGIN.profileId,
      mobile: LOGIN.mobile,
      name: null,
      pinHash: 'scrypt$unused',
      status: 'active',
      pinAttempts: 0,
      lockedUntil: null,
      credentialVersion: 0,
      createdAt: T0,
      updatedAt: T0,
    });
  }
  for (const idHash of requestHashes) {
    await storage.authorizationRequests.insertAuthorizationRequest({
      idHash,
      clientId: 'acme',
      redirectUri: 'https://acme.example/cb',
      state: null,
      codeChallenge: null,
      loginHint: null,
      browserHash: 'browser',
      createdAt: T0,
      expiresAt: T0 + 86_400 * 2,
      completedAt: null,
      endedBy: null,
      uiLocale: null,
      acrValues: [],
      maxAge: null,
      scopes: [],
      status: 'otp_sent',
      profileId: LOGIN.profileId,
    });
  }
}
