import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/main.js';
import { fixedClock } from '../../src/core/clock.js';
import { newSession } from '../../src/core/journey/session.js';
import { noticePostgresSkipped, postgresAdminUrl, usePostgresStorage } from '../helpers/postgres.js';

noticePostgresSkipped('customers lock during a sign-in');

const T0 = 1_767_225_600;

/** Whether some session of `url`'s database is waiting for a lock. */
async function someoneWaitsForALock(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`);
    return (rows[0] as { n: number }).n > 0;
  } finally {
    await client.end();
  }
}

/**
 * `customers lock` while a sign-in is completing on another instance
 * (docs/journey.md, "Consent"): the sign-in holds the customer's row, so the
 * lock waits for it and then ends the session and the approval the sign-in
 * created. Nothing of it survives the lock.
 */
describe.skipIf(!postgresAdminUrl)('customers lock during a sign-in, on PostgreSQL', () => {
  const pgStorage = usePostgresStorage();

  it('waits for the sign-in holding the customer, then ends what it created', async () => {
    const server = pgStorage.open();
    await server.migrate();
    const clock = fixedClock(T0);
    const env = { DATABASE_URL: pgStorage.databaseUrl(), CONNECT_MASTER_KEY: randomBytes(32).toString('base64'), CONNECT_LOG_LEVEL: 'silent' };
    const out: string[] = [];
    const cli = (...argv: string[]) => runCli(argv, { env, clock, stdout: (text) => void out.push(text), stderr: (text) => void out.push(text) });
    expect(await cli('customers', 'create', '--mobile', '+639171234567', '--pin', '482915', '--json')).toBe(0);
    const profileId = (JSON.parse(out.at(-1) ?? '{}') as { profileId: string }).profileId;

    let finish!: () => void;
    const finishing = new Promise<void>((resolve) => (finish = resolve));
    let held: unknown;
    // The sign-in's completion, as the journey runs it: hold the customer, then write the session and the approval.
    const signIn = server.transaction(async (tx) => {
      held = await tx.customers.holdCustomerForSignIn(profileId, T0);
      await tx.customerSessions.insertCustomerSession(newSession(profileId, T0, { sessionSeconds: 3600 }).record);
      await tx.consents.insertConsent({ profileId, clientId: 'cid_sandbox_acme', approvedAt: T0 });
      await finishing;
    });
    while (held === undefined) await sleep(10);
    expect(held).toMatchObject({ profileId, status: 'active' });

    const locking = cli('customers', 'lock', profileId, '--json');
    // The lock waits for the customer's row.
    let waited = false;
    for (let i = 0; i < 200 && !waited; i++) {
      waited = await someoneWaitsForALock(pgStorage.databaseUrl());
      if (!waited) await sleep(25);
    }
    expect(waited).toBe(true);
    finish();
    await signIn;
    expect(await locking).toBe(0);

    expect(await server.customers.findCustomer(profileId)).toMatchObject({ status: 'locked' });
    expect(await server.consents.listConsents(profileId)).toEqual([]);
    // No live session is left: the one the sign-in created was ended by the lock.
    expect(await server.customerSessions.endCustomerSessionsOf(profileId, T0 + 1)).toBe(0);
    // And a sign-in starting after the lock finds the customer unable to sign in.
    expect(await server.transaction((tx) => tx.customers.holdCustomerForSignIn(profileId, T0 + 2))).toBeUndefined();
  });
});
