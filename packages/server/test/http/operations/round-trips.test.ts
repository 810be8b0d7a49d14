import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { openStorage, type StorageOptions } from '../../../src/storage/kysely/open-storage.js';
import type { Storage } from '../../../src/core/storage/storage.js';
import { build } from '../../helpers/build.js';
import { noticePostgresSkipped, postgresAdminUrl, usePostgresStorage } from '../../helpers/postgres.js';
import { addCustomer, attribute, authorizeParams, authorizeUrl, Browser, enterOtp, expectClientRedirect, inputTag, logIn, MOBILE, PIN } from '../../helpers/customer-flow.js';
import type { SmsMessage, SmsSender } from '../../../src/core/sms/sms-sender.js';
import { expectRefreshed, expectTokensBody, postTokens, redeem, refreshAtToken, REFRESH_GRANTS } from '../../helpers/token-session.js';
import { obtainToken } from '../../helpers/wire.js';
import { noticeRedisSkipped, redisTestUrl } from '../../helpers/redis.js';

/**
 * The statements each customer endpoint sends to the database when it
 * succeeds (docs/operator-guide.md, "Database round trips"), counted by the
 * storage's own statement observer: every statement, a transaction's
 * `begin` and `commit` included. Counted, not timed, so the numbers do not
 * depend on the machine.
 */

/** Every statement the stores send, and what one piece of work sent. */
function recorder() {
  const statements: string[] = [];
  return {
    onStatement: (text: string) => void statements.push(text.trim()),
    async sentDuring<T>(work: () => Promise<T>): Promise<{ value: T; sent: string[] }> {
      const from = statements.length;
      const value = await work();
      return { value, sent: statements.slice(from) };
    },
  };
}

function roundTrips(engine: string, open: (options: StorageOptions) => Storage) {
  it(`${engine}: a code exchange sends ${engine === 'PostgreSQL' ? 2 : '1 + a transaction of 2'} statements, a refresh 1, POST /tokens 2 (a client token in use)`, async () => {
    const counted = recorder();
    const t = await build({ storage: open({ onStatement: counted.onStatement }) });
    const client = await t.createClient({ grants: REFRESH_GRANTS });
    await addCustomer(t);
    const params = await logIn(new Browser(t.app), authorizeParams(client));

    const exchange = await counted.sentDuring(() => redeem(t.app, client, params.get('code') ?? ''));
    // The code read (its tokens are minted for its customer and scopes), then consumed with its token session
    // in one atomic step: one statement on PostgreSQL, one transaction on SQLite (calls within the process).
    expect(exchange.sent[0]).toMatch(/^select \* from "authorization_codes"/);
    if (engine === 'PostgreSQL') {
      expect(exchange.sent).toHaveLength(2);
      expect(exchange.sent[1]).toMatch(/^with customer as .*consumed as \(update authorization_codes .*added as \(insert into token_sessions/s);
    } else {
      expect(exchange.sent.slice(1).map((text) => text.split(/\s/)[0]?.toLowerCase())).toEqual(['begin', 'update', 'insert', 'commit']);
    }

    t.clock.advance(5);
    const refresh = await counted.sentDuring(() => refreshAtToken(t.app, client, exchange.value.refreshToken));
    expectRefreshed(refresh.value);
    expect(refresh.sent).toHaveLength(1);
    expect(refresh.sent[0]).toMatch(/^update "token_sessions"/);

    const bearer = await obtainToken(t, client);
    const post = () => postTokens(t.app, { bearer, body: { refreshToken: exchange.value.refreshToken }, reference: randomUUID() });
    // The first use of a client token reads whether it was revoked; later uses know it from the change signal.
    // Each refresh comes after the reuse interval (10 s) of the one before: it mints.
    t.clock.advance(10);
    const first = await counted.sentDuring(post);
    expectTokensBody(first.value);
    expect(first.sent).toHaveLength(3);
    expect(first.sent[0]).toMatch(/from "revoked_tokens"/);
    t.clock.advance(10);
    const tokens = await counted.sentDuring(post);
    expectTokensBody(tokens.value);
    // The reference claimed with the sealed answer in it, then the refresh.
    expect(tokens.sent).toHaveLength(2);
    expect(tokens.sent[0]).toMatch(/^insert into "idempotent_requests"/);
    expect(tokens.sent[1]).toMatch(/^update "token_sessions"/);

    // Within the reuse interval: the grant still sends 1 statement (it decides to reuse); POST /tokens
    // one more, for the stored answer, which now holds the reused token.
    t.clock.advance(5);
    const reused = await counted.sentDuring(() => refreshAtToken(t.app, client, exchange.value.refreshToken));
    expect(expectRefreshed(reused.value, 3595).access_token).toBe(expectTokensBody(tokens.value).accessToken);
    expect(reused.sent).toHaveLength(1);
    const reusedPost = await counted.sentDuring(post);
    expect(expectTokensBody(reusedPost.value).accessToken).toBe(expectTokensBody(tokens.value).accessToken);
    expect(reusedPost.sent).toHaveLength(3);
    expect(reusedPost.sent[2]).toMatch(/^update "idempotent_requests"/);
  });
}

const redisUrl = redisTestUrl;
noticeRedisSkipped('database round trips of a whole login');

/** An SMS gateway outside the database (as the webhook is), keeping what it was given. */
function gateway(): SmsSender & { messages: SmsMessage[] } {
  const messages: SmsMessage[] = [];
  return {
    messages,
    async send(message) {
      messages.push(message);
    },
  };
}

/**
 * A whole login, step by step, as a browser makes it: the statements each
 * step sends, with the limits counted in Redis and the code sent by a
 * gateway outside the database (as in production).
 */
function loginRoundTrips(engine: string, open: (options: StorageOptions) => Storage, expected: Record<string, number>) {
  it(`${engine}: a whole login sends ${Object.values(expected).reduce((a, b) => a + b)} statements (${Object.values(expected).join(' + ')})`, async () => {
    const counted = recorder();
    const sms = gateway();
    const t = await build({ storage: open({ onStatement: counted.onStatement }), sms, env: { REDIS_URL: redisUrl ?? '' } });
    const client = await t.createClient();
    await addCustomer(t);
    const browser = new Browser(t.app);
    // The client and the signing keys are read once per instance, then known from the change signal;
    // the signals of the set-up's own writes (which may arrive late on a loaded machine) are let in
    // first, before and after that first read: three quiet 50 ms windows in a row.
    const settle = async () => {
      for (let quiet = 0; quiet < 3; ) quiet = (await counted.sentDuring(() => delay(50))).sent.length === 0 ? quiet + 1 : 0;
    };
    await settle();
    await browser.get(authorizeUrl(authorizeParams(client)));
    await settle();

    const sent: Record<string, string[]> = {};
    const step = async <T>(name: string, work: () => Promise<T>): Promise<T> => {
      const { value, sent: statements } = await counted.sentDuring(work);
      sent[name] = statements;
      return value;
    };
    const start = await step('GET /authorize', () => browser.get(authorizeUrl(authorizeParams(client, { user_id: MOBILE }))));
    const page = await step('GET /login', () => browser.get(String(start.headers.location)));
    expect(attribute(inputTag(page.body, 'mobile'), 'readonly')).toBeDefined();
    const submitted = await step('POST /login', () => browser.submit(page, { mobile: MOBILE, pin: PIN, action: 'login' }));
    const otpPage = await step('GET /login/otp', () => browser.get(String(submitted.headers.location)));
    const code = /\b(\d{6})\b/.exec(sms.messages.at(-1)?.body ?? '')?.[1] ?? '';
    const done = await step('POST /login/otp', () => enterOtp(browser, otpPage, MOBILE, code));
    expect(expectClientRedirect(done).get('code')).toMatch(/^[A-Za-z0-9_-]{43}$/);

    expect(Object.fromEntries(Object.entries(sent).map(([name, statements]) => [name, statements.length]))).toEqual(expected);
    // Every step reads the journey with its challenge and whether user_id is registered in one statement.
    for (const name of ['GET /login', 'POST /login', 'GET /login/otp', 'POST /login/otp']) expect(sent[name]?.[0]).toMatch(/^select "r"\.\*, "c"\."id"/);
    if (engine === 'PostgreSQL') {
      // The PIN counted; then its count lifted, the journey moved and the challenge stored in one statement.
      expect(sent['POST /login']?.slice(1)).toEqual([expect.stringMatching(/^update "customers" set "failed_pin_attempts"/), expect.stringMatching(/^with cleared as/)]);
      // The entry counted, compared and the sign-in completed in one statement (the customer's row taken first).
      expect(sent['POST /login/otp']?.[1]).toMatch(/^with first as \(select profile_id from customers [^)]* for update\),\s+claim as/);
    }
  });
}

describe('database round trips of the customer endpoints', () => {
  roundTrips('SQLite', (options) => openStorage({ engine: 'sqlite', path: ':memory:' }, options));
  noticePostgresSkipped('round trips');
  // Its own block: the PostgreSQL set-up runs for its tests only, never the SQLite ones above.
  describe.skipIf(!postgresAdminUrl)('PostgreSQL', () => {
    const pg = usePostgresStorage();
    roundTrips('PostgreSQL', (options) => pg.open(options));
  });
});

describe.skipIf(!redisUrl)('database round trips of a whole login', () => {
  // SQLite cannot write several tables in one statement: there a step that does is one transaction (begin … commit).
  loginRoundTrips('SQLite', (options) => openStorage({ engine: 'sqlite', path: ':memory:' }, options), {
    'GET /authorize': 1,
    'GET /login': 1,
    'POST /login': 7,
    'GET /login/otp': 1,
    'POST /login/otp': 9,
  });
  noticePostgresSkipped('round trips of a whole login');
  describe.skipIf(!postgresAdminUrl)('PostgreSQL', () => {
    const pg = usePostgresStorage();
    loginRoundTrips('PostgreSQL', (options) => pg.open(options), { 'GET /authorize': 1, 'GET /login': 1, 'POST /login': 3, 'GET /login/otp': 1, 'POST /login/otp': 2 });
  });
});
