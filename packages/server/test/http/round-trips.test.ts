import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { openStorage, type StorageOptions } from '../../src/storage/kysely/open-storage.js';
import type { Storage } from '../../src/storage/ports.js';
import { build } from '../helpers/build.js';
import { noticePostgresSkipped, postgresAdminUrl, usePostgresStorage } from '../helpers/postgres.js';
import { addCustomer, authorizeParams, Browser, logIn } from './customer-flow.js';
import { expectRefreshed, expectTokensBody, postTokens, redeem, refreshAtToken, REFRESH_GRANTS } from './token-session.js';
import { obtainToken } from './wire.js';

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
  it(`${engine}: a code exchange sends 2 statements, a refresh 1, POST /tokens 2 (a client token in use)`, async () => {
    const counted = recorder();
    const t = await build({ storage: open({ onStatement: counted.onStatement }) });
    const client = await t.createClient({ grants: REFRESH_GRANTS });
    await addCustomer(t);
    const params = await logIn(new Browser(t.app), authorizeParams(client));

    const exchange = await counted.sentDuring(() => redeem(t.app, client, params.get('code') ?? ''));
    // The code consumed with its binding checked, then the token session added while all it stands on holds.
    expect(exchange.sent).toHaveLength(2);
    expect(exchange.sent[0]).toMatch(/^update "authorization_codes"/);
    expect(exchange.sent[1]).toMatch(/^insert into token_sessions/);

    t.clock.advance(5);
    const refresh = await counted.sentDuring(() => refreshAtToken(t.app, client, exchange.value.refreshToken));
    expectRefreshed(refresh.value);
    expect(refresh.sent).toHaveLength(1);
    expect(refresh.sent[0]).toMatch(/^update "token_sessions"/);

    const bearer = await obtainToken(t, client);
    const post = () => postTokens(t.app, { bearer, body: { refreshToken: exchange.value.refreshToken }, reference: randomUUID() });
    // The first use of a client token reads whether it was revoked; later uses know it from the change signal.
    t.clock.advance(5);
    const first = await counted.sentDuring(post);
    expectTokensBody(first.value);
    expect(first.sent).toHaveLength(3);
    expect(first.sent[0]).toMatch(/from "revoked_tokens"/);
    t.clock.advance(5);
    const tokens = await counted.sentDuring(post);
    expectTokensBody(tokens.value);
    // The reference claimed with the sealed answer in it, then the refresh.
    expect(tokens.sent).toHaveLength(2);
    expect(tokens.sent[0]).toMatch(/^insert into "idempotent_requests"/);
    expect(tokens.sent[1]).toMatch(/^update "token_sessions"/);
  });
}

describe('database round trips of the customer endpoints', () => {
  roundTrips('SQLite', (options) => openStorage({ engine: 'sqlite', path: ':memory:' }, options));
  noticePostgresSkipped('round trips');
  const pg = usePostgresStorage();
  if (postgresAdminUrl) roundTrips('PostgreSQL', (options) => pg.open(options));
});
