import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/main.js';
import { fixedClock } from '../../src/core/clock.js';
import { newSession } from '../../src/core/journey/session.js';
import { build } from '../helpers/build.js';
import { noticePostgresSkipped, postgresAdminUrl, usePostgresStorage } from '../helpers/postgres.js';
import { approveIfAsked, authorizeParams, authorizeUrl, exchangeCode, expectClientRedirect, REDIRECT_URI } from '../helpers/customer-flow.js';
import { accessClaims, expectInactive, introspect, lifecycle } from '../helpers/token-session.js';
import { holdingTokenSessionInserts, pausingBetweenRedeemSteps, someoneWaitsForALock, untilLockWaiters } from './operator-bench.js';
import { hashCode } from '../../src/core/codes/authorization-code.js';
import { expectOAuthError } from '../helpers/wire.js';
import { pinSmsAuthentication } from '../../src/core/authentication.js';

noticePostgresSkipped('customers lock during a sign-in');

const T0 = 1_767_225_600;

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
      held = await tx.customers.holdCustomerForSignIn(profileId);
      await tx.customerSessions.insertCustomerSession(newSession(profileId, pinSmsAuthentication(T0, 'sign_in_otp'), T0, { sessionSeconds: 3600 }).record);
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
    expect(await server.transaction((tx) => tx.customers.holdCustomerForSignIn(profileId))).toBeUndefined();
  });
});

describe.skipIf(!postgresAdminUrl)('customers lock during a code exchange, on PostgreSQL', () => {
  const pgStorage = usePostgresStorage();

  it('a lock between the two steps of a code exchange, even one undone by an unlock: the exchange gives no tokens', async () => {
    const masterKey = randomBytes(32);
    const clock = fixedClock(T0);
    const env = { DATABASE_URL: pgStorage.databaseUrl(), CONNECT_MASTER_KEY: masterKey.toString('base64'), CONNECT_LOG_LEVEL: 'silent' };
    const { storage, gate } = pausingBetweenRedeemSteps(pgStorage.open());
    const t = await build({ storage, masterKey, clock });
    const s = await lifecycle({ t });
    const code = expectClientRedirect(await approveIfAsked(s.browser, await s.browser.get(authorizeUrl(authorizeParams(s.client))))).get('code') ?? '';

    gate.on = true;
    const exchanging = exchangeCode(t.app, s.client, { code, redirect_uri: REDIRECT_URI });
    await gate.reached;
    const out: string[] = [];
    expect(await runCli(['customers', 'lock', s.profileId, '--json'], { env, clock, stdout: (text) => void out.push(text), stderr: (text) => void out.push(text) })).toBe(0);
    // Only the login's token session (the exchange had not added one), and the code, not consumed yet.
    expect((JSON.parse(out.join('')) as { ended: { tokenSessions: number; codes: number } }).ended).toMatchObject({ tokenSessions: 1, codes: 1 });
    // Unlocked again before the exchange goes on: what the lock ended stays ended.
    expect(await runCli(['customers', 'unlock', s.profileId, '--json'], { env, clock, stdout: () => {}, stderr: (text) => void out.push(text) })).toBe(0);
    gate.open();
    expectOAuthError(await exchanging, { status: 400, error: 'invalid_grant', description: 'authorization code has expired or was ended' });
    gate.on = false;
    expect(await t.storage.tokenSessions.revokeTokenSessionsByCode(hashCode(code), T0)).toBe(0);
  });

  it('a lock meeting the token session a code exchange is adding waits for it, then revokes it (no deadlock)', async () => {
    const masterKey = randomBytes(32);
    const clock = fixedClock(T0);
    const env = { DATABASE_URL: pgStorage.databaseUrl(), CONNECT_MASTER_KEY: masterKey.toString('base64'), CONNECT_LOG_LEVEL: 'silent' };
    const t = await build({ storage: pgStorage.open(), masterKey, clock });
    const s = await lifecycle({ t });
    const code = expectClientRedirect(await approveIfAsked(s.browser, await s.browser.get(authorizeUrl(authorizeParams(s.client))))).get('code') ?? '';

    const hold = await holdingTokenSessionInserts(pgStorage.databaseUrl());
    try {
      const exchanging = exchangeCode(t.app, s.client, { code, redirect_uri: REDIRECT_URI });
      // The insert waits, holding the customer's row in share mode.
      expect(await untilLockWaiters(pgStorage.databaseUrl(), 1)).toBe(true);
      const out: string[] = [];
      const locking = runCli(['customers', 'lock', s.profileId, '--json'], { env, clock, stdout: (text) => void out.push(text), stderr: (text) => void out.push(text) });
      // And the lock waits for that row.
      expect(await untilLockWaiters(pgStorage.databaseUrl(), 2)).toBe(true);
      await hold.release();

      const exchanged = await exchanging;
      expect(exchanged.statusCode).toBe(200);
      expect(await locking).toBe(0);
      const locked = JSON.parse(out.join('')) as { ended: { tokenSessions: number } };
      // The login's token session and the one the exchange made.
      expect(locked.ended.tokenSessions).toBe(2);
      const tokens = exchanged.json<{ access_token: string; refresh_token: string }>();
      expectInactive(await introspect(t.app, s.client, tokens.refresh_token));
      const session = await t.storage.tokenSessions.findTokenSession((await accessClaims(t, tokens.access_token)).sid);
      expect(session?.revokedAt).toBe(T0);
    } finally {
      await hold.drop();
    }
  });
});
