import type { FastifyInstance } from 'fastify';
import { describe, expect, it } from 'vitest';
import { verifyPin } from '../../../src/core/customers/pin.js';
import { hashCookieValue } from '../../../src/core/journey/session.js';
import { noticePostgresSkipped, postgresAdminUrl } from '../../helpers/postgres.js';
import {
  addCustomer,
  authorizeParams,
  Browser,
  expectPage,
  expectSeeOther,
  latestOtp,
  MOBILE,
  pageText,
  startLogin,
  wrongOtp,
  type Response,
} from '../../helpers/customer-flow.js';
import { useSqliteInstances, usePostgresInstances, type Instances } from '../../helpers/instances.js';

/**
 * A PIN reset is done once (docs/hosted-login.md, "Forgot PIN"): of many
 * simultaneous submits of the right reset code, each going on to set a new
 * PIN, exactly one PIN is set; of many wrong codes exactly 5 are compared.
 * On SQLite and PostgreSQL, over one instance or two.
 */

const TABS = 10;
const WRONG_SUBMITS = 50;
const EXHAUSTED = 'Too many wrong codes. Ask for a new code.';

/** A reset of {@link MOBILE}'s PIN on its code's page, and the code. */
async function reachResetCode({ apps, t }: Instances) {
  const client = await t.createClient();
  const customer = await addCustomer(t);
  const browser = new Browser(apps[0] as FastifyInstance);
  const { requestId } = await startLogin(browser, authorizeParams(client));
  const resetPage = await browser.open(`/login/reset?request=${requestId}`);
  const asked = await browser.submit(resetPage, { mobile: MOBILE, action: 'send' });
  expectSeeOther(asked, /^\/login\/reset\/otp\?/);
  const codePage = await browser.follow(asked);
  expectPage(codePage, 200);
  await t.services.afterAnswer.idle();
  return { customer, browser, codePage, requestId, code: await latestOtp(t.app, MOBILE) };
}

/** The PIN tab `i` chooses: all different, none too easy to guess. */
const pinOf = (i: number) => `5930${String(10 + i)}`;

async function expectSetOnce(instances: Instances): Promise<void> {
  const { apps, t, raw } = instances;
  const { customer, browser, codePage, requestId, code } = await reachResetCode(instances);
  // Each tab enters the right code and, if it reaches the new PIN's page, chooses a PIN of its own.
  const tabs = await Promise.all(
    Array.from({ length: TABS }, async (_, i) => {
      const tab = browser.via(apps[i % apps.length] as FastifyInstance);
      const entered = await tab.submit(codePage, { otp: code, action: 'verify' });
      expectSeeOther(entered, /^\/login\/reset\/pin\?/);
      const pinPage = await tab.follow(entered);
      if (pinPage.statusCode !== 200 || !pinPage.body.includes('name="pin_confirmation"')) return { i, chosen: undefined };
      return { i, chosen: await tab.submit(pinPage, { pin: pinOf(i), pin_confirmation: pinOf(i), action: 'change' }) };
    }),
  );
  // Every tab that chose a PIN is sent to the login page; one of them set it (and cleared the session cookie).
  const chose = tabs.filter((tab): tab is { i: number; chosen: Response } => tab.chosen !== undefined);
  for (const tab of chose) expectSeeOther(tab.chosen, /^\/login\?request=/);
  const winners = chose.filter((tab) => tab.chosen.cookies.some((c) => c.name === 'connect_session' && c.value === ''));
  expect(winners).toHaveLength(1);

  expect(await t.storage.audit.listAuditEvents({ type: 'customer.pin_reset', limit: 100 })).toHaveLength(1);
  expect(await raw.count('otp_challenges', 'consumed_at is not null')).toBe(1);
  const pinHash = (await t.storage.customers.findCustomer(customer.profileId))?.pinHash ?? '';
  expect(await verifyPin(pinOf(winners[0]?.i ?? -1), pinHash)).toBe(true);
  expect((await t.storage.authorizationRequests.findAuthorizationRequest(hashCookieValue(requestId)))?.status).toBe('pending');
}

const FROM_NETWORK = 'Too many attempts were made from your network.';

async function expectFiveCompared(instances: Instances): Promise<void> {
  const { apps, t } = instances;
  const { browser, codePage, code, requestId } = await reachResetCode(instances);
  const responses = await Promise.all(
    Array.from({ length: WRONG_SUBMITS }, (_, i) => browser.via(apps[i % apps.length] as FastifyInstance).submit(codePage, { otp: wrongOtp(code), action: 'verify' })),
  );
  const said = responses.map((res) => {
    expectPage(res, 400);
    const text = pageText(res.body);
    return /That code is not right\. \d tr(?:y|ies) left\./.exec(text)?.[0] ?? (text.includes(EXHAUSTED) ? EXHAUSTED : text.includes(FROM_NETWORK) ? FROM_NETWORK : text);
  });
  // Past the address's 10 wrong entries in flight, an entry is refused before it is compared.
  expect(said.filter((s) => s !== EXHAUSTED && s !== FROM_NETWORK).sort()).toEqual([
    'That code is not right. 1 try left.',
    'That code is not right. 2 tries left.',
    'That code is not right. 3 tries left.',
    'That code is not right. 4 tries left.',
  ]);
  expect(said.filter((s) => s === EXHAUSTED).length).toBeGreaterThanOrEqual(1);
  expect(await t.storage.otpChallenges.findLatestOtpChallenge(hashCookieValue(requestId))).toMatchObject({ attempts: 5, consumedAt: null });
  // The right code now fails too, and no PIN was set.
  const right = await browser.submit(codePage, { otp: code, action: 'verify' });
  expectPage(right, 400);
  expect(pageText(right.body)).toContain(EXHAUSTED);
  expect(await t.storage.audit.listAuditEvents({ type: 'customer.pin_reset', limit: 100 })).toEqual([]);
}

const onSqlite = useSqliteInstances('connect-pin-reset-');

describe('a PIN reset on SQLite', () => {
  it(`${TABS} simultaneous submits of the right code, each going on to a new PIN: the PIN is set once`, async () => {
    await expectSetOnce(await onSqlite());
  });

  it(`${WRONG_SUBMITS} simultaneous wrong codes: exactly 5 compared, then the right code fails`, async () => {
    await expectFiveCompared(await onSqlite());
  });
});

noticePostgresSkipped('a PIN reset on PostgreSQL');

describe.skipIf(!postgresAdminUrl)('a PIN reset on PostgreSQL', () => {
  const instances = usePostgresInstances();
  it(`${TABS} simultaneous submits of the right code, each going on to a new PIN: the PIN is set once`, async () => {
    await expectSetOnce(await instances.one());
  });

  it(`${TABS} simultaneous submits of the right code over two instances: the PIN is set once`, async () => {
    await expectSetOnce(await instances.two());
  });

  it(`${WRONG_SUBMITS} simultaneous wrong codes over two instances: exactly 5 compared`, async () => {
    await expectFiveCompared(await instances.two());
  });
});
