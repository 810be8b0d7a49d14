import { createChangeCache } from '../changes/change-cache.js';
import type { ChangeFeed } from '../changes/change-feed.js';
import type { Client } from './client.js';

const MAX_ENTRIES = 10_000;

/**
 * Wraps a client lookup with a cache kept until the change signal says the
 * client changed (docs/operator-guide.md, "Changes reach every instance"),
 * so the token endpoint's hot path needs no database round trip while a
 * `clients` command takes effect on every instance within a second. Unknown
 * IDs are never cached, and the cache holds at most 10,000 clients.
 */
export function cacheClientLookup(
  findClient: (id: string) => Promise<Client | undefined>,
  changes: ChangeFeed,
): ((id: string) => Promise<Client | undefined>) & { close(): void } {
  const cache = createChangeCache<Client | undefined>(changes, 'client', { maxEntries: MAX_ENTRIES, keep: (c) => c !== undefined });
  return Object.assign((id: string) => cache.get(id, () => findClient(id)), { close: () => cache.close() });
}
