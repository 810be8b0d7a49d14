import { randomBytes } from 'node:crypto';
import { jwtDecrypt } from 'jose';
import { describe, expect, it } from 'vitest';
import { refreshCustomerToken, type RefreshDeps } from '../../../src/core/grants/refresh-token.js';
import { deriveKey } from '../../../src/core/keys/master-key.js';
import { ACME, T0, tokenSetup } from '../tokens/token-fixtures.js';

/**
 * The reuse interval of refreshes (docs/tokens.md, "Concurrent
 * refreshes"): refreshes of one token session within
 * `CONNECT_REFRESH_REUSE_SECONDS` of the refresh that minted its access
 * token get that token again, on a real database, with an injected clock.
 */

const WINDOW = 10;

async function setUp(seconds = WINDOW) {
  const s = await tokenSetup();
  const deps: RefreshDeps = { ...s.deps, reuse: { seconds, sealKey: deriveKey(randomBytes(32), 'refresh-reuse') } };
  const session = await s.openSession(ACME, undefined, []);
  const refresh = (scope?: string) => refreshCustomerToken(session.refreshToken, ACME, deps, { scope });
  const current = async () => (await s.storage.tokenSessions.findTokenSession(session.sid))?.accessJti;
  const jtiOf = async (token: string) =>
    String((await jwtDecrypt(token, s.keys.encryptionKey().key, { currentDate: new Date(s.clock.nowSeconds() * 1000) })).payload.jti);
  return { s, deps, session, refresh, current, jtiOf };
}

describe('refresh reuse interval', () => {
  it(`a refresh ${WINDOW - 1} s after the one that minted gets its token again, same expiry; at ${WINDOW} s and after, a new one`, async () => {
    const { s, refresh, current, jtiOf } = await setUp();
    const first = await refresh();
    s.clock.advance(WINDOW - 1);
    const justBefore = await refresh();
    expect(justBefore.accessToken).toBe(first.accessToken);
    expect(justBefore.accessJti).toBe(first.accessJti);
    expect(justBefore.expiresAt).toBe(first.expiresAt);
    // The token's own lifetime, less the seconds since it was minted.
    expect(justBefore.expiresIn).toBe(3600 - (WINDOW - 1));
    expect(await current()).toBe(await jtiOf(first.accessToken));

    s.clock.advance(1);
    const at = await refresh();
    expect(at.accessToken).not.toBe(first.accessToken);
    expect(at.expiresAt).toBe(T0 + WINDOW + 3600);
    expect(at.expiresIn).toBe(3600);
    expect(await current()).toBe(await jtiOf(at.accessToken));

    // The window runs from the refresh that minted, not from the reuses after it.
    s.clock.advance(WINDOW - 1);
    expect((await refresh()).accessToken).toBe(at.accessToken);
    s.clock.advance(2);
    const after = await refresh();
    expect(after.accessToken).not.toBe(at.accessToken);
    expect(await current()).toBe(await jtiOf(after.accessToken));
  });

  it('the access token from before the refresh stays invalid through the reuses', async () => {
    const { s, session, refresh, current } = await setUp();
    const first = await refresh();
    for (let i = 0; i < 3; i++) {
      s.clock.advance(1);
      expect((await refresh()).accessToken).toBe(first.accessToken);
      expect(await current()).not.toBe(session.accessJti);
    }
  });

  it('of simultaneous refreshes, every one gets the one access token the session keeps', async () => {
    const { refresh, current, jtiOf } = await setUp();
    const results = await Promise.all(Array.from({ length: 10 }, () => refresh()));
    expect(new Set(results.map((r) => r.accessToken)).size).toBe(1);
    expect(await current()).toBe(await jtiOf(results[0]?.accessToken ?? ''));
  });

  it('0 turns reuse off: every refresh mints, and of simultaneous ones only one stays the session’s', async () => {
    const { s, refresh, current, jtiOf } = await setUp(0);
    const first = await refresh();
    const second = await refresh();
    expect(second.accessToken).not.toBe(first.accessToken);
    const results = await Promise.all(Array.from({ length: 5 }, () => refresh()));
    expect(new Set(results.map((r) => r.accessToken)).size).toBe(5);
    expect(results.map((r) => r.accessJti)).toContain(await current());
    expect(await jtiOf(first.accessToken)).not.toBe(await current());
    s.clock.advance(1);
    expect((await refresh()).accessToken).not.toBe(results[0]?.accessToken);
  });

  it('a refresh for another scope mints its own token', async () => {
    const s = await tokenSetup();
    const deps: RefreshDeps = { ...s.deps, reuse: { seconds: WINDOW, sealKey: deriveKey(randomBytes(32), 'refresh-reuse') } };
    const session = await s.openSession({ ...ACME, scopes: ['payments:read', 'profile'] }, undefined, ['payments:read', 'profile']);
    const client = { ...ACME, scopes: ['payments:read', 'profile'] };
    const wide = await refreshCustomerToken(session.refreshToken, client, deps);
    const narrow = await refreshCustomerToken(session.refreshToken, client, deps, { scope: 'profile' });
    expect(narrow.accessToken).not.toBe(wide.accessToken);
    expect(narrow.scopes).toEqual(['profile']);
    expect((await refreshCustomerToken(session.refreshToken, client, deps, { scope: 'profile' })).accessToken).toBe(narrow.accessToken);
  });

  it('an access token revoked on its own (RFC 7009) is never handed out again: the next refresh mints', async () => {
    const { s, refresh } = await setUp();
    const first = await refresh();
    expect(await s.storage.tokenSessions.revokeAccessToken(first.sid, first.accessJti)).toBe(true);
    s.clock.advance(1);
    const next = await refresh();
    expect(next.accessToken).not.toBe(first.accessToken);
  });

  it('a sealed token cannot be opened with another master key: the stored copy is no bearer token', async () => {
    const { s, deps, session } = await setUp();
    await refreshCustomerToken(session.refreshToken, ACME, deps);
    s.clock.advance(1);
    const otherKey = { ...deps, reuse: { seconds: WINDOW, sealKey: deriveKey(randomBytes(32), 'refresh-reuse') } };
    await expect(refreshCustomerToken(session.refreshToken, ACME, otherKey)).rejects.toThrow();
  });
});
