import { describe, expect, it } from 'vitest';
import { hashCookieValue } from '../../src/core/journey/session.js';
import { noticePostgresSkipped, postgresAdminUrl, usePostgresStorage } from '../helpers/postgres.js';
import {
  addCustomer,
  authorizeParams,
  Browser,
  expectPage,
  expectSeeOther,
  latestOtp,
  MOBILE,
  outbox,
  pageText,
  PIN,
  startLogin,
  submitCredentials,
  type Response,
} from '../helpers/customer-flow.js';
import { operatorBench, type OperatorBench } from './operator-bench.js';

noticePostgresSkipped('an ended sign-in stays ended, on PostgreSQL');

/**
 * An ended sign-in stays ended (docs/journey.md, "When a sign-in ends"):
 * `customers lock` and a PIN reset cancel every journey of the customer
 * that has not reached its code, in the same transaction as the rest of
 * what they end; "Send a new code" then sends nothing, and neither the old
 * code nor a new one completes the sign-in, even after an unlock.
 */

const NEW_PIN = '590316';
const FINISHED = 'This sign-in has already finished. Go back to the app to continue.';
/** The page of a journey a lock ended, while the customer is locked: the account, not the sign-in (docs/journey.md, "When a sign-in ends"). */
/** The page of a journey a lock ended names whose customer support to contact: the client's. */
const LOCKED = 'This account cannot sign in right now. Please contact the customer support of Acme';

interface AtOtpPage {
  readonly browser: Browser;
  readonly page: Response;
  readonly requestId: string;
  readonly code: string;
  readonly profileId: string;
}

/** A customer who typed the right PIN: on the one-time-PIN page, its code sent. */
async function atOtpPage(b: OperatorBench): Promise<AtOtpPage> {
  const { profileId } = await addCustomer(b.t);
  const client = await b.t.createClient();
  const browser = new Browser(b.t.app);
  const { page: login, requestId } = await startLogin(browser, authorizeParams(client));
  const page = await submitCredentials(browser, login, MOBILE, PIN);
  return { browser, page, requestId, code: await latestOtp(b.t.app, MOBILE), profileId };
}

/** The journey's status as stored. */
async function status(b: OperatorBench, requestId: string): Promise<string | undefined> {
  return (await b.t.storage.authorizationRequests.findAuthorizationRequest(hashCookieValue(requestId)))?.status;
}

/** Neither "Send a new code" nor the old code goes anywhere: a clear page (`says`), no SMS, no redirect to the client. */
async function expectEnded(b: OperatorBench, s: AtOtpPage, smsBefore: number, says: string = FINISHED): Promise<void> {
  b.clock.advance(30);
  const resent = await s.browser.submit(s.page, { action: 'resend' });
  expectPage(resent, 400);
  expect(pageText(resent.body)).toContain(says);
  const entered = await s.browser.submit(s.page, { otp: s.code, action: 'verify' });
  expectPage(entered, 400);
  expect(pageText(entered.body)).toContain(says);
  // The one-time-PIN page itself, opened again, says the same.
  const reopened = await s.browser.get(`/login/otp?request=${s.requestId}`);
  expect(pageText(reopened.body)).toContain(says);
  expect(await outbox(b.t.app, MOBILE)).toHaveLength(smsBefore);
  expect(await status(b, s.requestId)).toBe('cancelled');
  // No session, no code: nothing of the sign-in exists.
  expect(await b.t.storage.customerSessions.endCustomerSessionsOf(s.profileId, b.clock.nowSeconds())).toBe(0);
}

/** A PIN reset in a new browser, to `pin`: its journey back at its login page. */
async function resetIn(b: OperatorBench, pin: string = NEW_PIN): Promise<{ browser: Browser; requestId: string; login: Response }> {
  const browser = new Browser(b.t.app);
  const { requestId } = await startLogin(browser, authorizeParams(await b.t.createClient()));
  const resetPage = await browser.open(`/login/reset?request=${requestId}`);
  const codePage = await browser.follow(await browser.submit(resetPage, { mobile: MOBILE, action: 'send' }));
  await b.t.services.afterAnswer.idle();
  const pinPage = await browser.follow(await browser.submit(codePage, { otp: await latestOtp(b.t.app, MOBILE), action: 'verify' }));
  const done = await browser.submit(pinPage, { pin, pin_confirmation: pin, action: 'change' });
  expectSeeOther(done, /^\/login\?request=/);
  return { browser, requestId, login: await browser.follow(done) };
}

function endedTests(open: () => Promise<OperatorBench>): void {
  it('customers lock at the one-time-PIN page: "Send a new code" sends nothing and says the account is locked; after unlock neither the old code nor a new one signs in', async () => {
    const b = await open();
    const s = await atOtpPage(b);
    b.clock.advance(1);
    const locked = await b.w.cliJson<{ ended: Record<string, number> }>(['customers', 'lock', s.profileId]);
    expect(await status(b, s.requestId)).toBe('cancelled');
    // The command and its audit event say so, as a PIN reset's event does.
    expect(locked.ended).toMatchObject({ journeys: 1 });
    const [event] = await b.audit('customer.locked');
    expect(event?.details).toMatchObject({ journeys_ended: 1 });
    await expectEnded(b, s, 1, LOCKED);
    b.clock.advance(1);
    await b.w.cliJson(['customers', 'unlock', s.profileId]);
    // Unlocked: the account may sign in again, but this sign-in stays ended.
    await expectEnded(b, s, 1, FINISHED);
  });

  it('customers lock once the code expired (the next "Send a new code" would start a new challenge): no SMS, before or after unlock', async () => {
    const b = await open();
    const s = await atOtpPage(b);
    b.clock.advance(301);
    await b.w.cliJson(['customers', 'lock', s.profileId]);
    await expectEnded(b, s, 1, LOCKED);
    await b.w.cliJson(['customers', 'unlock', s.profileId]);
    await expectEnded(b, s, 1, FINISHED);
  });

  it('a PIN reset in another browser ends the sign-in begun with the old PIN: no new code, the old one signs in no more', async () => {
    const b = await open();
    const s = await atOtpPage(b);
    b.clock.advance(301);
    // The customer resets the PIN elsewhere.
    const other = new Browser(b.t.app);
    const { requestId } = await startLogin(other, authorizeParams(await b.t.createClient()));
    const resetPage = await other.open(`/login/reset?request=${requestId}`);
    const codePage = await other.follow(await other.submit(resetPage, { mobile: MOBILE, action: 'send' }));
    await b.t.services.afterAnswer.idle();
    const verified = await other.submit(codePage, { otp: await latestOtp(b.t.app, MOBILE), action: 'verify' });
    const pinPage = await other.follow(verified);
    expectSeeOther(await other.submit(pinPage, { pin: NEW_PIN, pin_confirmation: NEW_PIN, action: 'change' }), /^\/login\?request=/);
    // The resetting journey itself goes on, at its login page.
    expect(await status(b, requestId)).toBe('pending');
    expect(await status(b, s.requestId)).toBe('cancelled');
    const [event] = await b.audit('customer.pin_reset');
    expect(event?.details).toMatchObject({ journeys_ended: 1 });
    // Not a lock: the sign-in has finished.
    await expectEnded(b, s, 2, FINISHED);
  });

  it('an account locked without its journeys ended (as by a lock in the same instant): "Send a new code" sends nothing', async () => {
    const b = await open();
    const s = await atOtpPage(b);
    b.clock.advance(301);
    // Only the customer's row: the journey is still `otp_sent`.
    await b.t.storage.customers.lockCustomer(s.profileId, b.clock.nowSeconds());
    const resent = await s.browser.submit(s.page, { action: 'resend' });
    expectPage(resent, 400);
    expect(pageText(resent.body)).toContain('This account cannot sign in right now.');
    expect(await outbox(b.t.app, MOBILE)).toHaveLength(1);
    expect(await status(b, s.requestId)).toBe('otp_sent');
  });

  it("customers lock right after a PIN reset ends the journey back at its login page: after unlock, the reset's code proves the phone for no login", async () => {
    const b = await open();
    const { profileId } = await addCustomer(b.t);
    const { browser, requestId, login } = await resetIn(b);
    expect(await status(b, requestId)).toBe('pending');
    b.clock.advance(1);
    const locked = await b.w.cliJson<{ ended: Record<string, number> }>(['customers', 'lock', profileId]);
    expect(locked.ended).toMatchObject({ journeys: 1 });
    expect(await status(b, requestId)).toBe('cancelled');
    const refused = await browser.submit(login, { mobile: MOBILE, pin: NEW_PIN, action: 'login' });
    expectPage(refused, 400);
    expect(pageText(refused.body)).toContain(LOCKED);
    await b.w.cliJson(['customers', 'unlock', profileId]);
    // Unlocked within the reset's 10 minutes: the new PIN in that journey brings no code back to the client.
    const again = await browser.submit(login, { mobile: MOBILE, pin: NEW_PIN, action: 'login' });
    expectPage(again, 400);
    expect(pageText(again.body)).toContain(FINISHED);
    expect(await outbox(b.t.app, MOBILE)).toHaveLength(1);
  });

  it("a second PIN reset in another browser ends the first reset's journey back at its login page: its reset code proves the phone no more", async () => {
    const b = await open();
    await addCustomer(b.t);
    const first = await resetIn(b);
    b.clock.advance(1);
    const second = await resetIn(b, '590318');
    expect(await status(b, second.requestId)).toBe('pending');
    expect(await status(b, first.requestId)).toBe('cancelled');
    const res = await first.browser.submit(first.login, { mobile: MOBILE, pin: '590318', action: 'login' });
    expectPage(res, 400);
    expect(pageText(res.body)).toContain(FINISHED);
  });

  it('only the journeys of that customer end: another customer at the one-time-PIN page goes on', async () => {
    const b = await open();
    const s = await atOtpPage(b);
    const other = await addCustomer(b.t, '+639181234321');
    const browser = new Browser(b.t.app);
    const { page: login, requestId } = await startLogin(browser, authorizeParams(await b.t.createClient()));
    await submitCredentials(browser, login, '+639181234321', PIN);
    await b.w.cliJson(['customers', 'lock', s.profileId]);
    expect(await status(b, s.requestId)).toBe('cancelled');
    expect(await status(b, requestId)).toBe('otp_sent');
    expect(other.status).toBe('active');
  });
}

describe('an ended sign-in stays ended, on SQLite', () => {
  endedTests(() => operatorBench());
});

describe.skipIf(!postgresAdminUrl)('an ended sign-in stays ended, on PostgreSQL', () => {
  const pg = usePostgresStorage();
  endedTests(() => operatorBench({ url: pg.databaseUrl(), open: pg.open }));
});
