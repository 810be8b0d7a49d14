import { beforeEach, describe, expect, it } from 'vitest';
import type { TokenSessionRecord } from '../../../src/core/tokens/records.js';
import { Conflict } from '../../../src/core/storage-errors.js';
import type { Storage } from '../../../src/core/storage/storage.js';
import { T, tokenSession, concurrently, type StorageUnderTest } from './fixtures.js';

/** The token-session store: its part of the storage contract. */
export function describeTokenSessionsContract(subject: StorageUnderTest): void {
  describe('token sessions', () => {
    let storage: Storage;
    beforeEach(() => {
      storage = subject.storage;
    });

    const tokens = () => storage.tokenSessions;

    it('stores and finds a token session with every field intact', async () => {
      const clientOnly = tokenSession({ sid: 'sid-2', codeHash: null, revokedAt: T + 7 });
      await tokens().insertTokenSession(tokenSession());
      await tokens().insertTokenSession(clientOnly);
      expect(await tokens().findTokenSession('sid-1')).toEqual(tokenSession());
      expect(await tokens().findTokenSession('sid-2')).toEqual(clientOnly);
      expect(await tokens().findTokenSession('sid-3')).toBeUndefined();
      await expect(tokens().insertTokenSession(tokenSession())).rejects.toBeInstanceOf(Conflict);
    });

    it('decides "reuse or replace" in one statement: of 20 concurrent refreshes with reuse, one replaces and 19 get its token', async () => {
      await tokens().insertTokenSession(tokenSession());
      const update = (i: number) => ({
        clientId: 'cid_sandbox_contract',
        refreshJti: 'refresh-jti-1',
        accessJti: `new-${i}`,
        accessExpiresAt: T + 3700 + i,
        now: T + 100,
        reuse: { since: T + 90, scope: 'profile', sealedAccess: `sealed-${i}` },
      });
      const results = await concurrently(20, (i) => tokens().replaceAccessToken('sid-1', update(i)));
      const replaced = results.filter((r) => r?.reused === false);
      expect(replaced).toHaveLength(1);
      const kept = (await tokens().findTokenSession('sid-1')) as TokenSessionRecord;
      const winner = Number(kept.accessJti.slice('new-'.length));
      expect(kept.accessExpiresAt).toBe(T + 3700 + winner);
      for (const r of results.filter((r) => r?.reused === true)) {
        expect(r).toEqual({ reused: true, accessJti: `new-${winner}`, accessExpiresAt: T + 3700 + winner, sealedAccess: `sealed-${winner}` });
      }
      // A refresh after the interval, another scope, or one without reuse: replaced.
      expect(await tokens().replaceAccessToken('sid-1', { ...update(31), now: T + 101, reuse: { ...update(31).reuse, since: T + 100 } })).toEqual({ reused: false });
      expect(await tokens().replaceAccessToken('sid-1', { ...update(30), reuse: { ...update(30).reuse, scope: '' } })).toEqual({ reused: false });
      const { reuse: _none, ...plain } = update(32);
      expect(await tokens().replaceAccessToken('sid-1', plain)).toEqual({ reused: false });
      // Without reuse nothing is kept to reuse: the next refresh within the interval replaces too.
      expect(await tokens().replaceAccessToken('sid-1', update(33))).toEqual({ reused: false });
      // An access token revoked on its own is never reused.
      expect(await tokens().revokeAccessToken('sid-1', 'new-33')).toBe(true);
      expect(await tokens().replaceAccessToken('sid-1', update(34))).toEqual({ reused: false });
      // A revoked session refuses either way.
      await tokens().revokeTokenSession('sid-1', T + 100);
      expect(await tokens().replaceAccessToken('sid-1', update(35))).toBeUndefined();
    });

    it('revokes every session of a code, and only those', async () => {
      await tokens().insertTokenSession(tokenSession({ sid: 'a' }));
      await tokens().insertTokenSession(tokenSession({ sid: 'b' }));
      await tokens().insertTokenSession(tokenSession({ sid: 'revoked-before', revokedAt: T + 1 }));
      await tokens().insertTokenSession(tokenSession({ sid: 'other-code', codeHash: 'code-2' }));
      await tokens().insertTokenSession(tokenSession({ sid: 'no-code', codeHash: null }));
      expect(await tokens().revokeTokenSessionsByCode('code-1', T + 50)).toBe(2);
      expect((await tokens().findTokenSession('a'))?.revokedAt).toBe(T + 50);
      expect((await tokens().findTokenSession('b'))?.revokedAt).toBe(T + 50);
      expect((await tokens().findTokenSession('revoked-before'))?.revokedAt).toBe(T + 1);
      expect((await tokens().findTokenSession('other-code'))?.revokedAt).toBeNull();
      expect((await tokens().findTokenSession('no-code'))?.revokedAt).toBeNull();
      expect(await tokens().revokeTokenSessionsByCode('code-1', T + 60)).toBe(0);
      expect(await tokens().revokeTokenSessionsByCode('code-unknown', T + 60)).toBe(0);
    });
    it('revokes every live session of a customer or of a client, and only those', async () => {
      await tokens().insertTokenSession(tokenSession({ sid: 'a' }));
      await tokens().insertTokenSession(tokenSession({ sid: 'b', clientId: 'cid_sandbox_other' }));
      await tokens().insertTokenSession(tokenSession({ sid: 'revoked-before', revokedAt: T + 1 }));
      await tokens().insertTokenSession(tokenSession({ sid: 'other-customer', profileId: '223456789012' }));
      await tokens().insertTokenSession(tokenSession({ sid: 'other-both', profileId: '323456789012', clientId: 'cid_sandbox_other' }));
      expect(await tokens().revokeTokenSessionsOf({ profileId: '123456789012' }, T + 50)).toBe(2);
      expect((await tokens().findTokenSession('a'))?.revokedAt).toBe(T + 50);
      expect((await tokens().findTokenSession('b'))?.revokedAt).toBe(T + 50);
      expect((await tokens().findTokenSession('revoked-before'))?.revokedAt).toBe(T + 1);
      expect((await tokens().findTokenSession('other-customer'))?.revokedAt).toBeNull();
      expect(await tokens().revokeTokenSessionsOf({ profileId: '123456789012' }, T + 60)).toBe(0);

      expect(await tokens().revokeTokenSessionsOf({ clientId: 'cid_sandbox_contract' }, T + 70)).toBe(1);
      expect((await tokens().findTokenSession('other-customer'))?.revokedAt).toBe(T + 70);
      expect((await tokens().findTokenSession('other-both'))?.revokedAt).toBeNull();
      // A revoked session's tokens cannot be replaced.
      expect(await tokens().replaceAccessToken('a', { clientId: 'cid_sandbox_contract', refreshJti: 'refresh-jti-1', accessJti: 'new', accessExpiresAt: T + 4000, now: T + 80 })).toBeUndefined();
    });

    it("replaces a session's access token only for its client and its refresh token, until that expires", async () => {
      await tokens().insertTokenSession(tokenSession());
      const update = { clientId: 'cid_sandbox_contract', refreshJti: 'refresh-jti-1', accessJti: 'new', accessExpiresAt: T + 4000, now: T + 10 };
      expect(await tokens().replaceAccessToken('sid-1', { ...update, clientId: 'cid_sandbox_other' })).toBeUndefined();
      expect(await tokens().replaceAccessToken('sid-1', { ...update, refreshJti: 'refresh-jti-2' })).toBeUndefined();
      expect(await tokens().replaceAccessToken('sid-1', { ...update, now: T + 604_800 })).toBeUndefined();
      expect((await tokens().findTokenSession('sid-1'))?.accessJti).toBe('access-jti-1');
      expect(await tokens().replaceAccessToken('sid-1', update)).toEqual({ reused: false });
      expect(await tokens().findTokenSession('sid-1')).toMatchObject({ accessJti: 'new', accessExpiresAt: T + 4000 });
    });
  });
}
