import { createChangeCache } from '../changes/change-cache.js';
import type { ChangeFeed } from '../changes/change-feed.js';
import type { RevokedTokenStore } from './token-session-store.js';

const MAX_ENTRIES = 10_000;

/**
 * Wraps the revoked client access tokens with a cache of "is `jti`
 * revoked", kept until the change signal announces that token's revocation
 * (docs/operator-guide.md, "Changes reach every instance"), so that a
 * client token in use needs no database round trip per request, while a
 * revocation on any instance takes effect everywhere within a second. A
 * revocation made through this store is forgotten at once here.
 */
export function cacheRevocations(store: RevokedTokenStore, changes: ChangeFeed): RevokedTokenStore & { close(): void } {
  const cache = createChangeCache<boolean>(changes, 'token', { maxEntries: MAX_ENTRIES });
  return {
    isTokenRevoked: (jti) => cache.get(jti, () => store.isTokenRevoked(jti)),
    async revokeToken(entry) {
      await store.revokeToken(entry);
      cache.delete(entry.jti);
      changes.heard({ kind: 'token', key: entry.jti });
    },
    deleteExpiredRevocations: (now, limit) => store.deleteExpiredRevocations(now, limit),
    close: () => cache.close(),
  };
}
