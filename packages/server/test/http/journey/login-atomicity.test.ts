import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { hashCookieValue, newSession } from '../../../src/core/journey/session.js';
import { openStorage } from '../../../src/storage/kysely/open-storage.js';
import { build, type TestApp } from '../../helpers/build.js';
import { createTestDatabase, noticePostgresSkipped, postgresAdminUrl, type TestDatabase } from '../../helpers/postgres.js';
import { openRawDatabase, type RawDatabase } from '../../helpers/raw-database.js';
import {
  addCustomers,
  authorizeParams,
  authorizeUrl,
  Browser,
  enterOtp,
  expectClientRedirect,
  expectPage,
  expectSeeOther,
  latestOtp,
  nthMobile,
  pageText,
  PIN,
  requestIdOf,
  type Response,
} from '../../helpers/customer-flow.js';
import { pinSmsAuthentication } from '../../../src/core/authentication.js';

/**
 * The login completion is all or nothing (docs/journey.md): the right
 * one-time PIN consumes the challenge, moves the journey, creates the
 * account (registration), ends the browser's previous session, starts a new
 * one, stores the approval and issues the code in one atomic step (on PostgreSQL one statement). Each of
 * those writes is made to fail in turn, by a trigger in the database: the
 * customer gets an error page, nothing of the login is left behind, and the
 * same code completes the login once the database works again.
 */

type Flow = 'login' | 'registration';

/** One write of the completion, and the trigger condition that picks it out from the journey's other writes. */
interface Write {
  readonly name: string;
  readonly table: string;
  readonly event: 'INSERT' | 'UPDATE';
  readonly when?: string;
  readonly flows: readonly Flow[];
}

const BOTH: readonly Flow[] = ['login', 'registration'];

const WRITES: readonly Write[] = [
  { name: 'consuming the challenge', table: 'otp_challenges', event: 'UPDATE', when: 'NEW.consumed_at IS NOT NULL AND OLD.consumed_at IS NULL', flows: BOTH },
  { name: 'moving the journey to code_issued', table: 'authorization_requests', event: 'UPDATE', when: "NEW.status = 'code_issued'", flows: BOTH },
  { name: 'creating the account', table: 'customers', event: 'INSERT', flows: ['registration'] },
  { name: 'ending the previous session', table: 'customer_sessions', event: 'UPDATE', when: 'NEW.ended_at IS NOT NULL AND OLD.ended_at IS NULL', flows: BOTH },
  { name: 'starting the new session', table: 'customer_sessions', event: 'INSERT', flows: BOTH },
  { name: 'storing the approval', table: 'consents', event: 'INSERT', flows: BOTH },
  { name: 'issuing the code', table: 'authorization_codes', event: 'INSERT', flows: BOTH },
];

const CASES = WRITES.flatMap((write) => write.flows.map((flow) => ({ flow, write }))).map(
  ({ flow, write }, i) => [`${flow}: ${write.name} (${write.table} ${write.event})`, flow, write, i] as const,
);

/** What the tables hold, as far as a login changes them. */
async function snapshot(raw: RawDatabase) {
  return {
    customers: await raw.count('customers'),
    sessions: await raw.count('customer_sessions'),
    liveSessions: await raw.count('customer_sessions', 'ended_at is null'),
    consents: await raw.count('consents'),
    codes: await raw.count('authorization_codes'),
    consumedChallenges: await raw.count('otp_challenges', 'consumed_at is not null'),
  };
}

/** The mobiles of case `i`: the customer who signs in (or registers), and the one whose session the browser has. */
function mobilesOf(i: number): { mobile: string; previous: string } {
  return { mobile: nthMobile(2 * i), previous: nthMobile(2 * i + 1) };
}

/**
 * A browser with a live session of another customer (so the completion has
 * a previous session to end) on the one-time-PIN page of `flow`.
 */
async function reachOtp(t: TestApp, flow: Flow, i: number) {
  const { mobile, previous } = mobilesOf(i);
  const client = await t.createClient();
  const [previousCustomer] = await addCustomers(t, flow === 'login' ? [previous, mobile] : [previous]);
  const browser = new Browser(t.app);
  const session = newSession(previousCustomer?.profileId as string, pinSmsAuthentication(t.clock.nowSeconds(), 'sign_in_otp'), t.clock.nowSeconds(), { sessionSeconds: 43_200 });
  await t.storage.customerSessions.insertCustomerSession(session.record);
  browser.cookies.set('connect_session', session.id);

  const res = await browser.get(authorizeUrl(authorizeParams(client, { user_id: mobile })));
  const requestId = requestIdOf(expectSeeOther(res, /^\/login\?request=/));
  // A user_id with no account opens the registration page.
  const page = await browser.follow(res);
  expectPage(page, 200);
  expect(pageText(page.body)).toContain(flow === 'login' ? 'Log in to continue' : 'Create your account');
  const fields: Record<string, string> = flow === 'login' ? { mobile, pin: PIN, action: 'login' } : { mobile, pin: '3817', pin_confirmation: '3817', action: 'register' };
  expectSeeOther(await browser.submit(page, fields), /^\/login\/otp\?request=/);
  const otpPage = await browser.open(`/login/otp?request=${requestId}`);
  expectPage(otpPage, 200);
  return { browser, otpPage, requestId, mobile, previousSession: session.id, otp: await latestOtp(t.app, mobile) };
}

/** The 503 page that asks the customer to try again; never a redirect, never a session. */
function expectErrorPage(res: Response): void {
  expectPage(res, 503);
  expect(pageText(res.body)).toContain('Please try again in a moment');
  expect(res.cookies.filter((c) => c.name === 'connect_session')).toEqual([]);
}

/** Case `i`: `write` fails during the completion of `flow`, then works again. */
async function expectAllOrNothing(t: TestApp, raw: RawDatabase, flow: Flow, write: Write, i: number): Promise<void> {
  const { browser, otpPage, requestId, mobile, previousSession, otp } = await reachOtp(t, flow, i);
  const before = await snapshot(raw);
  const journey = () => t.storage.authorizationRequests.findAuthorizationRequest(hashCookieValue(requestId));
  const previous = () => t.storage.customerSessions.findCustomerSession(hashCookieValue(previousSession));

  const restore = await raw.failWrites(write.table, write.event, write.when);
  expectErrorPage(await enterOtp(browser, otpPage, mobile, otp));

  // Nothing of the login remains.
  expect(await snapshot(raw)).toEqual(before);
  expect(await journey()).toMatchObject({ status: 'otp_sent', completedAt: null });
  expect(await t.storage.otpChallenges.findLatestOtpChallenge(hashCookieValue(requestId))).toMatchObject({ consumedAt: null });
  expect((await previous())?.endedAt).toBeNull();
  expect(browser.cookies.get('connect_session')).toBe(previousSession);
  if (flow === 'registration') expect(await t.storage.customers.findCustomerByMobile(mobile)).toBeUndefined();

  // The database works again: the same code completes the login, all of it.
  await restore();
  const params = expectClientRedirect(await enterOtp(browser, otpPage, mobile, otp));
  const customer = await t.storage.customers.findCustomerByMobile(mobile);
  expect(params.get('profileId')).toBe(customer?.profileId);
  expect(await snapshot(raw)).toEqual({
    customers: before.customers + (flow === 'registration' ? 1 : 0),
    sessions: before.sessions + 1,
    liveSessions: before.liveSessions,
    consents: before.consents + 1,
    codes: before.codes + 1,
    consumedChallenges: before.consumedChallenges + 1,
  });
  expect(await journey()).toMatchObject({ status: 'code_issued', completedAt: t.clock.nowSeconds() });
  expect((await previous())?.endedAt).toBe(t.clock.nowSeconds());
  expect(browser.cookies.get('connect_session')).not.toBe(previousSession);
}

// Every case of an engine runs on one database (one master key), each with
// its own customers and its own app; the counts it checks are taken before
// and after.
const masterKey = randomBytes(32);

describe('login completion on SQLite: a failing write leaves nothing', () => {
  let dir = '';
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'connect-login-atomicity-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each(CASES)('%s', async (_name, flow, write, i) => {
    const database = { engine: 'sqlite', path: join(dir, 'connect.db') } as const;
    const t = await build({ database, masterKey });
    await expectAllOrNothing(t, await openRawDatabase(database), flow, write, i);
  });
});

noticePostgresSkipped('login completion on PostgreSQL');

describe.skipIf(!postgresAdminUrl)('login completion on PostgreSQL: a failing write leaves nothing', () => {
  let database: TestDatabase | undefined;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database?.drop());

  it.each(CASES)('%s', async (_name, flow, write, i) => {
    const location = { engine: 'postgres', url: database?.url as string } as const;
    const storage = openStorage(location);
    onTestFinished(() => storage.close());
    const t = await build({ storage, masterKey });
    await expectAllOrNothing(t, await openRawDatabase(location), flow, write, i);
  });
});
