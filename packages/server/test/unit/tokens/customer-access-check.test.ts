import { describe, expect, it } from 'vitest';
import { refreshCustomerToken } from '../../../src/core/customer-tokens/refresh-customer-token.js';
import { InvalidToken } from '../../../src/core/errors.js';
import type { TokenSessionRecord } from '../../../src/core/tokens/records.js';
import { createCustomerAccessCheck } from '../../../src/core/tokens/customer-access-check.js';
import { issueClientAccessToken } from '../../../src/core/tokens/client-access-token.js';
import { ACME, OTHER, PROFILE_ID, rejectionOf, T0, tokenSetup, URLS } from './token-fixtures.js';
import { SESSION_CACHE_SECONDS } from '../../../src/core/lifetimes.js';

/** A check over the setup's database whose session reads are counted. */
async function setup(change: (record: TokenSessionRecord) => TokenSessionRecord = (r) => r) {
  const s = await tokenSetup();
  const reads: string[] = [];
  const check = createCustomerAccessCheck({
    keys: s.keys,
    clock: s.clock,
    urls: URLS,
    tokenSessions: {
      async findTokenSession(sid) {
        reads.push(sid);
        const record = await s.storage.tokenSessions.findTokenSession(sid);
        return record && change(record);
      },
    },
  });
  return { ...s, reads, check };
}

async function refused(promise: Promise<unknown>, description: string): Promise<void> {
  const error = await rejectionOf(promise);
  expect(error).toBeInstanceOf(InvalidToken);
  expect(error).toMatchObject({ error: 'invalid_token', status: 401, description });
}

const REPLACED = 'the access token has been replaced or revoked';
const INVALID = 'the access token is invalid or expired';

describe('createCustomerAccessCheck', () => {
  it('accepts a current customer access token and says whose it is', async () => {
    const s = await setup();
    const session = await s.openSession();
    expect(await s.check.verify(session.accessToken)).toEqual({
      profileId: PROFILE_ID,
      clientId: ACME.id,
      sid: session.sid,
      jti: session.accessJti,
      expiresAt: T0 + 3600,
    });
  });

  it('caches session state for the current clock second', () => {
    expect(SESSION_CACHE_SECONDS).toBe(1);
  });

  it('reads each session from the database once per clock second', async () => {
    const s = await setup();
    const a = await s.openSession();
    const b = await s.openSession();
    for (let i = 0; i < 5; i++) {
      await s.check.verify(a.accessToken);
      await s.check.verify(b.accessToken);
    }
    expect(s.reads).toEqual([a.sid, b.sid]);
    s.clock.advance(1);
    for (let i = 0; i < 3; i++) await s.check.verify(a.accessToken);
    expect(s.reads).toEqual([a.sid, b.sid, a.sid]);
  });

  it('a refresh is seen once the second changes: the old token is accepted in the cached second, refused in the next', async () => {
    const s = await setup();
    const session = await s.openSession();
    s.clock.advance(10);
    await s.check.verify(session.accessToken);
    await refreshCustomerToken(session.refreshToken, ACME, s.deps);
    await expect(s.check.verify(session.accessToken)).resolves.toMatchObject({ jti: session.accessJti });
    expect(s.reads).toHaveLength(1);
    s.clock.advance(1);
    await refused(s.check.verify(session.accessToken), REPLACED);
    expect(s.reads).toHaveLength(2);
  });

  it('a refresh is seen at once when the session was not read in the current second', async () => {
    const s = await setup();
    const session = await s.openSession();
    await s.check.verify(session.accessToken);
    s.clock.advance(1);
    await refreshCustomerToken(session.refreshToken, ACME, s.deps);
    await refused(s.check.verify(session.accessToken), REPLACED);
  });

  it('the new token of a refresh is accepted at once, even in the second the old state was cached in', async () => {
    const s = await setup();
    const session = await s.openSession();
    s.clock.advance(10);
    await s.check.verify(session.accessToken);
    const refreshed = await refreshCustomerToken(session.refreshToken, ACME, s.deps);
    const access = await s.check.verify(refreshed.accessToken);
    expect(access.jti).not.toBe(session.accessJti);
    expect(s.reads).toHaveLength(2);
    // That read brought the cache up to date: the old token is refused from now on.
    await refused(s.check.verify(session.accessToken), REPLACED);
    await s.check.verify(refreshed.accessToken);
    expect(s.reads).toHaveLength(2);
  });

  it('replaced tokens minted before the cached second cost no extra database reads', async () => {
    const s = await setup();
    const session = await s.openSession();
    s.clock.advance(5);
    const refreshed = await refreshCustomerToken(session.refreshToken, ACME, s.deps);
    s.clock.advance(5);
    await s.check.verify(refreshed.accessToken);
    for (let i = 0; i < 5; i++) await refused(s.check.verify(session.accessToken), REPLACED);
    expect(s.reads).toHaveLength(1);
  });

  it('a revocation is seen once the second changes (at once when not cached)', async () => {
    const s = await setup();
    const cached = await s.openSession();
    const uncached = await s.openSession();
    await s.check.verify(cached.accessToken);
    await s.storage.tokenSessions.revokeTokenSession(cached.sid, T0);
    await s.storage.tokenSessions.revokeTokenSession(uncached.sid, T0);
    await s.check.verify(cached.accessToken);
    await refused(s.check.verify(uncached.accessToken), REPLACED);
    s.clock.advance(1);
    await refused(s.check.verify(cached.accessToken), REPLACED);
  });

  it('a revoked session is not read again within its second, whatever tokens are presented', async () => {
    const s = await setup();
    const session = await s.openSession();
    await s.storage.tokenSessions.revokeTokenSession(session.sid, T0);
    await refused(s.check.verify(session.accessToken), REPLACED);
    await refused(s.check.verify(session.accessToken), REPLACED);
    expect(s.reads).toHaveLength(1);
  });

  it('a revoked access token (the refresh token kept) is refused; the next refresh’s token is accepted', async () => {
    const s = await setup();
    const session = await s.openSession();
    await s.storage.tokenSessions.revokeAccessToken(session.sid, session.accessJti);
    await refused(s.check.verify(session.accessToken), REPLACED);
    const refreshed = await refreshCustomerToken(session.refreshToken, ACME, s.deps);
    await expect(s.check.verify(refreshed.accessToken)).resolves.toMatchObject({ sid: session.sid });
  });

  it('expiry to the second: accepted at exp - 1, refused at exp without reading the database', async () => {
    const s = await setup();
    const session = await s.openSession();
    s.clock.set(T0 + 3599);
    await s.check.verify(session.accessToken);
    s.clock.set(T0 + 3600);
    await refused(s.check.verify(session.accessToken), INVALID);
    expect(s.reads).toHaveLength(1);
  });

  it.each<[string, (s: Awaited<ReturnType<typeof setup>>) => Promise<string | undefined>]>([
    ['no token', async () => undefined],
    ['an empty token', async () => ''],
    ['garbage', async () => 'not-a-token'],
    ['five empty segments', async () => '....'],
    ['a refresh token', async (s) => (await s.openSession()).refreshToken],
    ['a client access token', async (s) => (await issueClientAccessToken(ACME, { ...s.deps, urls: URLS })).token],
    ['an oversized token', async (s) => `${(await s.openSession()).accessToken}${'A'.repeat(5000)}`],
  ])('%s → invalid_token, without reading the database', async (_name, token) => {
    const s = await setup();
    const presented = await token(s);
    await refused(s.check.verify(presented), INVALID);
    expect(s.reads).toEqual([]);
  });

  it.each<[string, (record: TokenSessionRecord) => TokenSessionRecord]>([
    ['another client', (record) => ({ ...record, clientId: OTHER.id })],
    ['another customer', (record) => ({ ...record, profileId: '999999999999' })],
  ])('a session stored for %s than the token names → refused', async (_name, change) => {
    const s = await setup(change);
    const session = await s.openSession();
    await refused(s.check.verify(session.accessToken), REPLACED);
  });

  it('a session that does not exist → refused', async () => {
    const s = await setup();
    const session = await s.openSession();
    await s.storage.tokenSessions.revokeTokenSession(session.sid, T0);
    const check = createCustomerAccessCheck({ keys: s.keys, clock: s.clock, urls: URLS, tokenSessions: { findTokenSession: async () => undefined } });
    await refused(check.verify(session.accessToken), REPLACED);
  });
});
