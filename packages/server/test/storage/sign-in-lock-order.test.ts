import pg from 'pg';
import { describe, expect, it } from 'vitest';
import type { OtpChallengeRecord } from '../../src/core/otp/records.js';
import type { OtpEntry } from '../../src/core/journey/stores.js';
import { lockCustomer } from '../../src/core/operator/lock-customer.js';
import type { Storage } from '../../src/core/storage/storage.js';
import { noticePostgresSkipped, postgresAdminUrl, usePostgresStorage } from '../helpers/postgres.js';

/**
 * On PostgreSQL a right PIN (its count lifted, the journey moved, a new
 * challenge stored) and an entry of the one-time PIN (the customer held, the
 * journey moved) are single statements that lock the same customer and
 * journey rows: they must take them in one order, or a second login in
 * another tab and the one-time PIN of the first would deadlock, and one of
 * them would end in a 503 (docs/journey.md, "Atomicity").
 */

const T = 1_767_225_600;
const PROFILE = '123456789012';

function challenge(overrides: Partial<OtpChallengeRecord> = {}): OtpChallengeRecord {
  return {
    id: 'challenge-1',
    requestHash: 'request-1',
    purpose: 'login',
    mobile: '+639171234567',
    profileId: PROFILE,
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

const ENTRY: OtpEntry = {
  idHash: 'request-1',
  challengeId: 'challenge-1',
  codeHashes: ['code-hash-1'],
  now: T + 10,
  maxAttempts: 5,
  customer: { profileId: PROFILE },
  endSessionHash: null,
  session: { idHash: 'session-new', profileId: PROFILE, createdAt: T + 10, lastSeenAt: T + 10, expiresAt: T + 3600, endedAt: null, authentication: null },
  consent: { profileId: PROFILE, clientId: 'cid_sandbox_acme', approvedAt: T + 10 },
  code: { codeHash: 'code-new', clientId: 'cid_sandbox_acme', redirectUri: 'https://acme.example/cb', profileId: PROFILE, codeChallenge: null, createdAt: T + 10, expiresAt: T + 70, consumedAt: null, scopes: [], authentication: null },
};

/** Waits until `count` statements of the database wait for a lock. */
async function lockWaiters(admin: pg.Client, database: string, count: number): Promise<void> {
  for (let i = 0; i < 500; i++) {
    const { rows } = await admin.query<{ n: number }>(`select count(*)::int as n from pg_stat_activity where datname = $1 and wait_event_type = 'Lock'`, [database]);
    if ((rows[0]?.n ?? 0) >= count) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`never saw ${count} statements waiting for a lock`);
}

/** A customer at the one-time-PIN page: the customer, the journey `otp_sent`, its challenge. */
async function atOtpPage(storage: Storage): Promise<void> {
    await storage.migrate();
    await storage.customers.insertCustomer({
      profileId: PROFILE,
      mobile: '+639171234567',
      name: null,
      pinHash: 'scrypt$unused',
      status: 'active',
      pinAttempts: 1,
      lockedUntil: null,
      credentialVersion: 0,
      createdAt: T,
      updatedAt: T,
    });
    await storage.authorizationRequests.insertAuthorizationRequest({
      idHash: 'request-1',
      clientId: 'cid_sandbox_acme',
      redirectUri: 'https://acme.example/cb',
      state: null,
      codeChallenge: null,
      loginHint: null,
      browserHash: 'browser-1',
      createdAt: T,
      expiresAt: T + 900,
      completedAt: null,
      endedBy: null,
      uiLocale: null,
      acrValues: [],
      maxAge: null,
      scopes: [],
      status: 'otp_sent',
      profileId: PROFILE,
    });
    await storage.otpChallenges.insertOtpChallenge(challenge());
}

describe('the lock order of a login on PostgreSQL', () => {
  noticePostgresSkipped('the lock order of a login');
  const pgs = usePostgresStorage();

  it.skipIf(!postgresAdminUrl)('a right PIN in another tab and the right one-time PIN of the same journey do not deadlock', { timeout: 20_000 }, async () => {
    const storage = pgs.open();
    await atOtpPage(storage);
    const url = pgs.databaseUrl();
    const database = new URL(url).pathname.slice(1);
    const holder = new pg.Client({ connectionString: url });
    const admin = new pg.Client({ connectionString: url });
    await holder.connect();
    await admin.connect();
    try {
      // Both statements queue behind a third party holding the journey, then go on at once.
      await holder.query('begin');
      await holder.query(`select 1 from authorization_requests where id_hash = 'request-1' for update`);
      const login = storage.signIns.startChallenge({
        idHash: 'request-1',
        now: T + 10,
        profileId: PROFILE,
        challenge: challenge({ id: 'challenge-2', codeHash: 'code-hash-2', createdAt: T + 10 }),
        clearPin: { profileId: PROFILE, attempt: 1 },
      });
      await lockWaiters(admin, database, 1);
      const entry = storage.signIns.enterOtp(ENTRY);
      await lockWaiters(admin, database, 2);
      await holder.query('commit');
      const results = await Promise.allSettled([login, entry]);
      expect(results.filter((r) => r.status === 'rejected').map((r) => String((r as PromiseRejectedResult).reason))).toEqual([]);
    } finally {
      await holder.end();
      await admin.end();
    }
  });

  it.skipIf(!postgresAdminUrl)(
    'customers lock and the right one-time PIN at the same instant do not deadlock: the sign-in completes before the lock ends it, or finds it',
    { timeout: 20_000 },
    async () => {
      const storage = pgs.open();
      await atOtpPage(storage);
      const url = pgs.databaseUrl();
      const database = new URL(url).pathname.slice(1);
      const admin = new pg.Client({ connectionString: url });
      await admin.connect();
      let reached!: () => void;
      const atCustomerRow = new Promise<void>((resolve) => (reached = resolve));
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      try {
        // The lock's transaction stops once it has taken what it takes first, then goes on.
        const lock = storage.transaction(async (tx) => {
          const stores = { ...tx, customers: { ...tx.customers, lockCustomer: async (id: string, now: number) => {
            const locked = await tx.customers.lockCustomer(id, now);
            reached();
            await released;
            return locked;
          } } };
          return lockCustomer(PROFILE, stores, T + 10);
        });
        await atCustomerRow;
        const entry = storage.signIns.enterOtp(ENTRY);
        // Either the entry waits for the lock's transaction, or it has already finished.
        await Promise.race([lockWaiters(admin, database, 1), entry.then(() => undefined, () => undefined)]);
        release();
        const results = await Promise.allSettled([lock, entry]);
        expect(results.filter((r) => r.status === 'rejected').map((r) => String((r as PromiseRejectedResult).reason))).toEqual([]);
        // Whatever the order, nothing of the sign-in is left standing.
        const { rows } = await admin.query<{ n: number }>(`select count(*)::int as n from customer_sessions where profile_id = $1 and ended_at is null`, [PROFILE]);
        expect(rows[0]?.n).toBe(0);
      } finally {
        release();
        await admin.end();
      }
    },
  );

  it.skipIf(!postgresAdminUrl)(
    'customers passkeys remove and a passkey sign-in at the same instant: a sign-in that found the passkey completes before the removal returns',
    { timeout: 20_000 },
    async () => {
      const storage = pgs.open();
      await atOtpPage(storage);
      await storage.passkeys.insertPasskey({
        credentialId: 'cred-1', profileId: PROFILE, userHandle: 'handle-1', publicKey: 'key', signCount: 0, transports: [],
        aaguid: null, name: null, createdAt: T, lastUsedAt: null, heldUntil: null, suspendedAt: null,
      });
      const url = pgs.databaseUrl();
      const database = new URL(url).pathname.slice(1);
      const holder = new pg.Client({ connectionString: url });
      const admin = new pg.Client({ connectionString: url });
      await holder.connect();
      await admin.connect();
      try {
        // The sign-in has held the customer and found the passkey, and waits for the journey.
        await holder.query('begin');
        await holder.query(`select 1 from authorization_requests where id_hash = 'request-1' for update`);
        const signIn = storage.signIns.signInWithPasskey({
          idHash: 'request-1', now: T + 10, profileId: PROFILE, credentialId: 'cred-1', endSessionHash: null,
          session: ENTRY.session, consent: ENTRY.consent, code: ENTRY.code,
        });
        await lockWaiters(admin, database, 1);
        // The operator's removal, as `customers passkeys remove` runs it: it must not return while that sign-in can still complete.
        const removal = storage.transaction((tx) => tx.passkeys.removePasskey(PROFILE, 'cred-1'));
        const first = await Promise.race([removal.then(() => 'removed'), lockWaiters(admin, database, 2).then(() => 'waits')]);
        expect(first).toBe('waits');
        await holder.query('commit');
        expect(await signIn).toMatchObject({ kind: 'completed' });
        expect(await removal).toBe(true);
        expect(await storage.passkeys.findPasskey('cred-1')).toBeUndefined();
      } finally {
        await holder.end();
        await admin.end();
      }
    },
  );
});
