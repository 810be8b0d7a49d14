import type { Clock } from '../clock.js';
import type { Client } from './client.js';
import { CLIENT_CACHE_SECONDS } from '../lifetimes.js';

const MAX_ENTRIES = 10_000;

/**
 * Wraps a client lookup with a small, short-lived cache, so the token
 * endpoint's hot path usually needs no database round trip. Unknown IDs are
 * never cached, and the cache holds at most 10,000 clients.
 */
export function cacheClientLookup(
  findClient: (id: string) => Promise<Client | undefined>,
  clock: Clock,
  ttlSeconds = CLIENT_CACHE_SECONDS,
): (id: string) => Promise<Client | undefined> {
  const cache = new Map<string, { client: Client; until: number }>();
  return async (id) => {
    const now = clock.nowSeconds();
    const hit = cache.get(id);
    if (hit && hit.until > now) return hit.client;
    const client = await findClient(id);
    cache.delete(id);
    if (client) {
      if (cache.size >= MAX_ENTRIES) cache.delete(cache.keys().next().value as string);
      cache.set(id, { client, until: now + ttlSeconds });
    }
    return client;
  };
}
