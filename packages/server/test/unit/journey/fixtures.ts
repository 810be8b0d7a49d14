import { testAddress } from '../../helpers/addresses.js';
import type { ClientAddress } from '../../../src/core/client-address.js';
import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import { createAuditLog, type AuditEventType, type AuditRecord } from '../../../src/core/audit/audit-log.js';
import type { Client } from '../../../src/core/clients/client.js';
import { fixedClock, type FixedClock } from '../../../src/core/clock.js';
import type { Customer } from '../../../src/core/customers/customer.js';
import { createCustomer } from '../../../src/core/customers/manage-customers.js';
import type { PinCheckQueue } from '../../../src/core/customers/pin.js';
import { testPinCheckQueue } from '../../helpers/pin-checks.js';
import { cachedPinHash } from '../../helpers/pin-hash.js';
import type { JourneyDeps } from '../../../src/core/journey/deps.js';
import type { StepContext } from '../../../src/core/journey/open.js';
import type { StepResult } from '../../../src/core/journey/outcomes.js';
import type { AuthorizationRequestRecord } from '../../../src/core/journey/records.js';
import { hashCookieValue, newSession } from '../../../src/core/journey/session.js';
import { submitLogin } from '../../../src/core/journey/steps/login.js';
import { startJourney, type StartResult } from '../../../src/core/journey/start.js';
import type { Lifetimes } from '../../../src/core/lifetimes.js';
import type { AttemptLimiter } from '../../../src/core/limits/attempt-limiter.js';
import type { SendLimiter } from '../../../src/core/limits/send-limiter.js';
import { OtpHasher } from '../../../src/core/otp/otp-hasher.js';
import type { SmsSender } from '../../../src/core/sms/sms-sender.js';
import { createLimits, hashLimitKey, LIMIT_KEY_PREFIXES, type LimitBudgets } from '../../../src/limits/create-limits.js';
import type { Storage } from '../../../src/core/storage/storage.js';
import { clientRecord } from '../../helpers/client-record.js';
import { memoryStorage, recordingSender, T0, type RecordingSender } from '../otp/otp-fixtures.js';
import { pinSmsAuthentication } from '../../../src/core/authentication.js';

export { T0 };

export const ISSUER = 'https://auth.connect.test';
export const REDIRECT = 'https://acme.example/cb';
export const ACME: Client = clientRecord({ id: 'cid_sandbox_acme', name: 'Acme Shop', redirectUri: REDIRECT });
export const OTHER_CLIENT: Client = clientRecord({ id: 'cid_sandbox_other', name: 'Other Shop', redirectUri: 'https://other.example/cb' });
/** A client that may not sign customers in right now. */
export const DISABLED_CLIENT: Client = clientRecord({ id: 'cid_sandbox_off', name: 'Off Shop', redirectUri: 'https://off.example/cb', status: 'disabled' });

export const MOBILE = '+639171234567';
export const MASKED = '+63******4567';
export const OTHER_MOBILE = '+639179876543';
export const PIN = '7391';
export const WRONG_PIN = '7392';
export const ADDRESS = testAddress('203.0.113.7');
export const OTHER_ADDRESS = testAddress('198.51.100.9');
export const BROWSER = 'browser-cookie-1';

/** A valid `/authorize` query of Acme, with `state=xyz`. */
export const QUERY: Readonly<Record<string, string>> = { response_type: 'code', client_id: ACME.id, redirect_uri: REDIRECT, state: 'xyz' };

/** Budgets large enough never to matter unless a test lowers one. */
export const OPEN_BUDGETS: LimitBudgets = { smsLimitPerMobile: 100, smsLimitPerAddress: 100, pinLimitPerAddress: 100 };

export const LIFETIMES = { codeSeconds: 300, sessionIdleSeconds: 1800, sessionSeconds: 43_200 } as const;

/** What a test may put in place of the parts {@link journeySetup} builds. */
export interface JourneyOptions {
  readonly budgets?: Partial<LimitBudgets>;
  readonly lifetimes?: Partial<Pick<Lifetimes, 'codeSeconds' | 'sessionIdleSeconds' | 'sessionSeconds'>>;
  readonly pinChecks?: PinCheckQueue;
  readonly pinAttempts?: AttemptLimiter;
  readonly sends?: SendLimiter;
  readonly sms?: SmsSender;
  /** Wraps the database the journey uses (to put a fake in front of one port). */
  readonly wrapDb?: (db: Storage) => JourneyDeps['db'];
}

/** A journey started on the login (or consent) page: its ID and how its pages are called. */
export interface Started {
  readonly requestId: string;
  readonly idHash: string;
  /** The step context of the browser that started it, from {@link ADDRESS}. */
  readonly context: StepContext;
  /** The journey as stored now. */
  record(): Promise<AuthorizationRequestRecord>;
}

/** Everything a journey test needs, on a fresh migrated in-memory database at T0. */
export interface JourneyTest {
  readonly storage: Storage;
  readonly clock: FixedClock;
  readonly sms: RecordingSender;
  readonly deps: JourneyDeps;
  /** `GET /authorize` with {@link QUERY} and `query` on top, from {@link BROWSER}. */
  start(query?: Record<string, string>, browser?: { browserId?: string; sessionId?: string; address?: ClientAddress }): Promise<StartResult>;
  /** {@link start}, which must open a journey (`goto`). */
  begin(query?: Record<string, string>, browser?: { browserId?: string; sessionId?: string }): Promise<Started>;
  /** A customer with {@link PIN}, created now. */
  addCustomer(mobile?: string, pin?: string): Promise<Customer>;
  /** A live session of `profileId`, started now; returns the cookie value. */
  session(profileId: string): Promise<string>;
  /** Records that `profileId` approved `clientId`. */
  approve(profileId: string, clientId?: string): Promise<void>;
  /** Logs in with the right PIN on `journey`'s login page; returns the one-time PIN sent. */
  toOtp(journey: Started, mobile?: string, pin?: string): Promise<string>;
  /** The audit events of `type`, oldest first. */
  audits(type: AuditEventType): Promise<AuditRecord[]>;
  /** The points counted against `address`'s failed-PIN budget now (0 when none). */
  pinPointsOf(address: ClientAddress): Promise<number>;
}

/**
 * The journey's dependencies, built as the composition root builds them but
 * on a real migrated in-memory SQLite database, a fixed clock at T0, a
 * recording SMS sender, the real limits counting in that database on that
 * clock, and the real PIN-check queue; each may be replaced.
 */
export async function journeySetup(options: JourneyOptions = {}): Promise<JourneyTest> {
  const storage = await memoryStorage();
  const clock = fixedClock(T0);
  const sms = recordingSender();
  const clients = new Map([ACME, OTHER_CLIENT, DISABLED_CLIENT].map((client) => [client.id, client]));
  const limits = createLimits({ counters: storage.rateLimitCounters, budgets: { ...OPEN_BUDGETS, ...options.budgets }, nowMs: () => clock.nowSeconds() * 1000 });
  const deps: JourneyDeps = {
    db: options.wrapDb ? options.wrapDb(storage) : storage,
    findClient: async (id) => clients.get(id),
    clock,
    lifetimes: { ...LIFETIMES, ...options.lifetimes },
    issuer: ISSUER,
    pinChecks: options.pinChecks ?? testPinCheckQueue(),
    pinAttempts: options.pinAttempts ?? limits.pinAttempts,
    journeyStarts: limits.journeyStarts,
    otpEntries: limits.otpEntries,
    resetSends: limits.resetSends,
    resetOtpEntries: limits.resetOtpEntries,
    sends: options.sends ?? limits.sends,
    sms: options.sms ?? sms,
    otpHasher: new OtpHasher(randomBytes(32)),
    knownDeviceKey: randomBytes(32),
    audit: createAuditLog(storage.audit, clock),
    webauthn: { rpId: 'localhost', origins: [ISSUER], holdSeconds: 0 },
  };

  const start = (query: Record<string, string> = {}, browser: { browserId?: string; sessionId?: string; address?: ClientAddress } = {}) =>
    startJourney({ ...QUERY, ...query }, { browserId: browser.browserId ?? BROWSER, sessionId: browser.sessionId, address: browser.address ?? ADDRESS }, deps);

  const test: JourneyTest = {
    storage,
    clock,
    sms,
    deps,
    start,
    async begin(query = {}, browser = {}) {
      const result = await start(query, browser);
      const goto = expectKind(result, 'goto');
      const { requestId } = goto;
      const idHash = hashCookieValue(requestId);
      return {
        requestId,
        idHash,
        context: { requestId, browserId: browser.browserId ?? BROWSER, sessionId: browser.sessionId, address: ADDRESS },
        async record() {
          const record = await storage.authorizationRequests.findAuthorizationRequest(idHash);
          if (!record) throw new Error('the journey is not stored');
          return record;
        },
      };
    },
    async addCustomer(mobile = MOBILE, pin = PIN) {
      const { customer } = await createCustomer({ mobile, pin: '', pinHash: await cachedPinHash(pin) }, { customers: storage.customers, clock });
      return customer;
    },
    async session(profileId) {
      const session = newSession(profileId, pinSmsAuthentication(clock.nowSeconds(), 'sign_in_otp'), clock.nowSeconds(), deps.lifetimes);
      await storage.customerSessions.insertCustomerSession(session.record);
      return session.id;
    },
    async approve(profileId, clientId = ACME.id) {
      await storage.consents.insertConsent({ profileId, clientId, approvedAt: clock.nowSeconds() });
    },
    async toOtp(journey, mobile = MOBILE, pin = PIN) {
      const sent = sms.messages.length;
      const result = await submitLogin(journey.context, { mobile, pin }, deps);
      expect(result).toEqual({ kind: 'goto', page: 'otp', requestId: journey.requestId });
      expect(sms.messages).toHaveLength(sent + 1);
      return sms.lastCode();
    },
    audits: (type) => storage.audit.listAuditEvents({ type, limit: 100 }),
    async pinPointsOf(address) {
      const counter = await storage.rateLimitCounters.findRateLimitCounter(
        `${LIMIT_KEY_PREFIXES.pinPerAddress}:${hashLimitKey(address.bucket)}`,
        clock.nowSeconds() * 1000,
      );
      return counter?.points ?? 0;
    },
  };
  return test;
}

/** `result`, which must be of `kind` (the message shows what it was instead). */
export function expectKind<R extends StartResult, K extends R['kind']>(result: R, kind: K): Extract<R, { kind: K }> {
  expect(result.kind, JSON.stringify(result)).toBe(kind);
  return result as Extract<R, { kind: K }>;
}

/** The query of a redirect back to Acme's registered redirect URI. */
export function redirectParams(result: StepResult | StartResult, redirectUri = REDIRECT): Record<string, string> {
  const { location } = expectKind(result, 'redirect');
  expect(location.startsWith(`${redirectUri}?`), location).toBe(true);
  return Object.fromEntries(new URL(location).searchParams);
}

/** A one-time PIN that is not `code`. */
export const otherCode = (code: string): string => (code === '000000' ? '000001' : '000000');
