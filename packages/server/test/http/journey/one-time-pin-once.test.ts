import type { FastifyInstance } from 'fastify';
import { describe, expect, it } from 'vitest';
import { hashCookieValue } from '../../../src/core/journey/session.js';
import { noticePostgresSkipped, postgresAdminUrl } from '../../helpers/postgres.js';
import {
  addCustomer,
  authorizeParams,
  Browser,
  exchangeCode,
  expectClientRedirect,
  expectPage,
  latestOtp,
  MOBILE,
  pageText,
  PIN,
  REDIRECT_URI,
  startLogin,
  submitCredentials,
  wrongOtp,
  type Response,
} from '../../helpers/customer-flow.js';
import { useSqliteInstances, usePostgresInstances, type Instances } from '../../helpers/instances.js';

/**
 * A one-time PIN is accepted exactly once (docs/journey.md): of many
 * simultaneous submits of the right code one completes the login and the
 * others find it finished; of many wrong ones exactly 5 are compared, and
 * after them even the right code fails.
 */

const RIGHT_SUBMITS = 20;
const WRONG_SUBMITS = 50;
const FINISHED = 'This sign-in has already finished. Go back to the app to continue.';
const EXHAUSTED = 'Too many wrong codes. Ask for a new code.';

/** A sign-in of {@link MOBILE} that reached the one-time-PIN page. */
async function reachOtp({ apps, t }: Instances) {
  const client = await t.createClient();
  await addCustomer(t);
  const browser = new Browser(apps[0] as FastifyInstance);
  const { page, requestId } = await startLogin(browser, authorizeParams(client));
  const otpPage = await submitCredentials(browser, page, MOBILE, PIN);
  return { client, browser, otpPage, requestId, otp: await latestOtp(t.app, MOBILE) };
}

/** Submits `otp` `count` times at once from the browser, spread over the instances. */
function submitAtOnce(instances: Instances, browser: Browser, otpPage: Response, otp: string, count: number): Promise<Response[]> {
  const { apps } = instances;
  return Promise.all(Array.from({ length: count }, (_, i) => browser.via(apps[i % apps.length] as FastifyInstance).submit(otpPage, { otp, action: 'verify' })));
}

async function expectAcceptedOnce(instances: Instances): Promise<void> {
  const { t, raw } = instances;
  const { client, browser, otpPage, otp } = await reachOtp(instances);
  const responses = await submitAtOnce(instances, browser, otpPage, otp, RIGHT_SUBMITS);

  const toClient = responses.filter((res) => String(res.headers.location ?? '').startsWith(REDIRECT_URI));
  expect(toClient).toHaveLength(1);
  const winner = toClient[0] as Response;
  const code = expectClientRedirect(winner).get('code') as string;
  expect(code).toMatch(/^[A-Za-z0-9_-]{43}$/);
  // Only the winner starts a session.
  const sessionCookies = responses.flatMap((res) => res.cookies.filter((c) => c.name === 'connect_session' && c.value !== ''));
  expect(sessionCookies).toHaveLength(1);
  expect(sessionCookies[0]?.value).toBe(winner.cookies.find((c) => c.name === 'connect_session')?.value);

  // Every other submit ends on the "finished" page (after at most a hop to the journey's own page).
  for (const res of responses.filter((r) => r !== winner)) {
    const page = await browser.via(t.app).follow(res);
    expectPage(page, 400);
    expect(pageText(page.body)).toContain(FINISHED);
  }

  expect(await raw.count('customer_sessions')).toBe(1);
  expect(await raw.count('authorization_codes')).toBe(1);
  expect(await raw.count('consents')).toBe(1);
  expect(await raw.count('otp_challenges', 'consumed_at is not null')).toBe(1);
  expect((await exchangeCode(t.app, client, { code, redirect_uri: REDIRECT_URI })).statusCode).toBe(200);
}

async function expectFiveCompared(instances: Instances): Promise<void> {
  const { t, raw } = instances;
  const { browser, otpPage, otp, requestId } = await reachOtp(instances);
  const responses = await submitAtOnce(instances, browser, otpPage, wrongOtp(otp), WRONG_SUBMITS);

  const said = responses.map((res) => {
    expectPage(res, 400);
    const text = pageText(res.body);
    return /That code is not right\. \d tr(?:y|ies) left\./.exec(text)?.[0] ?? (text.includes(EXHAUSTED) ? EXHAUSTED : text);
  });
  // Entries 1 to 4 are told how many are left; the 5th ends the challenge and so does every later one.
  expect(said.filter((s) => s !== EXHAUSTED).sort()).toEqual([
    'That code is not right. 1 try left.',
    'That code is not right. 2 tries left.',
    'That code is not right. 3 tries left.',
    'That code is not right. 4 tries left.',
  ]);
  expect(said.filter((s) => s === EXHAUSTED)).toHaveLength(WRONG_SUBMITS - 4);

  const challenge = await t.storage.otpChallenges.findLatestOtpChallenge(hashCookieValue(requestId));
  expect(challenge).toMatchObject({ attempts: 5, consumedAt: null });
  expect(await t.storage.audit.listAuditEvents({ type: 'otp.exhausted', limit: 100 })).toHaveLength(1);

  // Now even the right code fails, and nothing of a login exists.
  const right = await browser.submit(otpPage, { otp, action: 'verify' });
  expectPage(right, 400);
  expect(pageText(right.body)).toContain(EXHAUSTED);
  expect(await raw.count('customer_sessions')).toBe(0);
  expect(await raw.count('authorization_codes')).toBe(0);
  expect((await t.storage.authorizationRequests.findAuthorizationRequest(hashCookieValue(requestId)))?.status).toBe('otp_sent');
}

const onSqlite = useSqliteInstances('connect-otp-once-');

describe('the one-time PIN on SQLite', () => {
  it(`${RIGHT_SUBMITS} simultaneous submits of the right code: one login, the others find it finished`, async () => {
    await expectAcceptedOnce(await onSqlite());
  });

  it(`${WRONG_SUBMITS} simultaneous wrong codes: exactly 5 compared, then the right code fails`, async () => {
    await expectFiveCompared(await onSqlite());
  });
});

noticePostgresSkipped('the one-time PIN on PostgreSQL');

describe.skipIf(!postgresAdminUrl)('the one-time PIN on PostgreSQL', () => {
  const instances = usePostgresInstances();
  it(`${RIGHT_SUBMITS} simultaneous submits of the right code: one login, the others find it finished`, async () => {
    await expectAcceptedOnce(await instances.one());
  });

  it(`${RIGHT_SUBMITS} simultaneous submits of the right code over two instances sharing one storage: one login`, async () => {
    await expectAcceptedOnce(await instances.two({ shared: true }));
  });

  it(`${RIGHT_SUBMITS} simultaneous submits of the right code over two instances with their own pools: one login`, async () => {
    await expectAcceptedOnce(await instances.two());
  });

  it(`${WRONG_SUBMITS} simultaneous wrong codes: exactly 5 compared, then the right code fails`, async () => {
    await expectFiveCompared(await instances.one());
  });

  it(`${WRONG_SUBMITS} simultaneous wrong codes over two instances: exactly 5 compared`, async () => {
    await expectFiveCompared(await instances.two());
  });
});
