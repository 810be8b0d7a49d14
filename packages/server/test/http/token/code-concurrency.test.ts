import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { decodeJwt } from 'jose';
import { describe, expect, it } from 'vitest';
import { hashCode } from '../../../src/core/codes/authorization-code.js';
import { build, type TestApp } from '../../helpers/build.js';
import { noticePostgresSkipped, postgresAdminUrl, usePostgresStorage } from '../../helpers/postgres.js';
import {
  addCustomer,
  authorizeParams,
  Browser,
  csrfToken,
  exchangeCode,
  expectClientRedirect,
  latestOtp,
  logIn,
  MOBILE,
  PIN,
  REDIRECT_URI,
  startLogin,
  submitCredentials,
  type Response,
} from '../../helpers/customer-flow.js';
import { expectOAuthError, type Credentials } from '../../helpers/wire.js';

const EXCHANGES = 20;

/** A client, a customer and one fresh code, obtained through `t`. */
async function obtainCode(t: TestApp): Promise<{ client: Credentials; code: string }> {
  const client = await t.createClient({ grants: ['client_credentials', 'authorization_code', 'refresh_token'] });
  await addCustomer(t);
  const params = await logIn(new Browser(t.app), authorizeParams(client));
  return { client, code: params.get('code') ?? '' };
}

/**
 * Redeems `code` `EXCHANGES` times at once, spread over `apps`: one exchange
 * redeems it and every other one is a replay, answered `invalid_grant`. At
 * most one gets tokens (none when a replay came first;
 * docs/journey.md, "The code"), and the replays revoked them.
 */
async function expectOneRedemption(apps: readonly FastifyInstance[], t: TestApp, client: Credentials, code: string): Promise<void> {
  const responses = await Promise.all(
    Array.from({ length: EXCHANGES }, (_, i) => exchangeCode(apps[i % apps.length] as FastifyInstance, client, { code, redirect_uri: REDIRECT_URI })),
  );
  const winners = responses.filter((res) => res.statusCode === 200);
  expect(winners.length).toBeLessThanOrEqual(1);
  for (const res of responses.filter((r) => r.statusCode !== 200)) {
    expectOAuthError(res, { status: 400, error: 'invalid_grant', description: 'authorization code was already used; the tokens issued for it are revoked' });
  }
  const [winner] = winners;
  if (winner) {
    const body = winner.json<{ access_token: string; refresh_token: string }>();
    expect(body.access_token.split('.')).toHaveLength(5);
    expect(body.refresh_token.split('.')).toHaveLength(3);
    // The winner's token session was created from the code, and the replays revoked it.
    const sid = decodeJwt(body.refresh_token).sid as string;
    expect((await t.storage.tokenSessions.findTokenSession(sid))?.revokedAt).toBe(t.clock.nowSeconds());
  }
  // No token session of the code is left unrevoked.
  expect(await t.storage.tokenSessions.revokeTokenSessionsByCode(hashCode(code), t.clock.nowSeconds())).toBe(0);
}

/** Submits the right one-time PIN `n` times at once: exactly one login completes with a code. */
async function expectOneLogin(t: TestApp, n: number): Promise<void> {
  const client = await t.createClient({ name: 'Racer' });
  const browser = new Browser(t.app);
  const { page } = await startLogin(browser, authorizeParams(client));
  const otpPage = await submitCredentials(browser, page, MOBILE, PIN);
  const otp = await latestOtp(t.app, MOBILE);
  const token = csrfToken(otpPage.body);
  const action = /<form\b[^>]*action="([^"]*)"/.exec(otpPage.body)?.[1] ?? '';
  const responses = await Promise.all(Array.from({ length: n }, () => browser.post(action, { csrf_token: token, otp })));
  for (const res of responses) expect(res.statusCode).toBeLessThan(500);
  const toClient = responses.filter((res) => String(res.headers.location ?? '').startsWith(REDIRECT_URI));
  expect(toClient).toHaveLength(1);
  expectClientRedirect(toClient[0] as Response);
  expect(new Set(responses.map((res) => res.cookies.find((c) => c.name === 'connect_session')?.value).filter(Boolean)).size).toBe(1);
}

describe('concurrent code redemption on SQLite', () => {
  it(`${EXCHANGES} simultaneous exchanges of one code: exactly one redeems it, no usable tokens are left`, async () => {
    const t = await build();
    const { client, code } = await obtainCode(t);
    await expectOneRedemption([t.app], t, client, code);
  });

  it('simultaneous entries of the right one-time PIN complete one login', async () => {
    const t = await build();
    await addCustomer(t);
    await expectOneLogin(t, 10);
  });
});

noticePostgresSkipped('concurrent code redemption on PostgreSQL');

describe.skipIf(!postgresAdminUrl)('concurrent code redemption on PostgreSQL', () => {
  const { open } = usePostgresStorage();

  it(`${EXCHANGES} simultaneous exchanges of one code on one instance: exactly one redeems it, no usable tokens are left`, async () => {
    const t = await build({ storage: open() });
    const { client, code } = await obtainCode(t);
    await expectOneRedemption([t.app], t, client, code);
  });

  it(`${EXCHANGES} simultaneous exchanges of one code over two instances sharing the database: exactly one redeems it, no usable tokens are left`, async () => {
    const masterKey = randomBytes(32);
    const a = await build({ storage: open(), masterKey });
    const b = await build({ storage: open(), masterKey, clock: a.clock });
    const { client, code } = await obtainCode(a);
    await expectOneRedemption([a.app, b.app], a, client, code);
  });

  it('a code granted by one instance is redeemed at the other, once', async () => {
    const masterKey = randomBytes(32);
    const a = await build({ storage: open(), masterKey });
    const b = await build({ storage: open(), masterKey, clock: a.clock });
    const { client, code } = await obtainCode(a);
    const res = await exchangeCode(b.app, client, { code, redirect_uri: REDIRECT_URI });
    expect(res.statusCode).toBe(200);
    expectOAuthError(await exchangeCode(a.app, client, { code, redirect_uri: REDIRECT_URI }), { status: 400, error: 'invalid_grant' });
  });

  it('simultaneous entries of the right one-time PIN complete one login', async () => {
    const t = await build({ storage: open() });
    await addCustomer(t);
    await expectOneLogin(t, 10);
  });
});
