import type { ChangeFeed, ChangeKind } from './change-feed.js';

/** A cache of records of one kind, kept exactly as long as nothing changed them. */
export interface ChangeCache<V> {
  /**
   * The record for `key`: from memory while the change feed is current and
   * no change of it was heard since it was read, otherwise from `load`.
   * Concurrent misses of one key share one load.
   */
  get(key: string, load: () => Promise<V>): Promise<V>;
  /** Forgets one record (a caller that learnt it is outdated). */
  delete(key: string): void;
  /** How many records are held. */
  readonly size: number;
  /** Stops listening to the feed. */
  close(): void;
}

type Entry<V> = { readonly value: V } | { readonly loading: Promise<V> };

/**
 * A cache invalidated by change signals instead of a lifetime
 * (docs/operator-guide.md, "Changes reach every instance"): an entry is
 * used until a change of its record is heard, or until the feed stops being
 * current. A change heard while the record is being read discards what that
 * read returns, so a read that raced a change is never kept. `keep` decides
 * which loaded values are worth keeping (e.g. not "unknown").
 *
 * @example
 * const clients = createChangeCache<Client | undefined>(feed, 'client', { keep: (c) => c !== undefined });
 * const client = await clients.get(id, () => store.findClient(id));
 */
export function createChangeCache<V>(
  feed: ChangeFeed,
  kind: ChangeKind,
  options: { maxEntries?: number; keep?: (value: V) => boolean } = {},
): ChangeCache<V> {
  const maxEntries = options.maxEntries ?? 10_000;
  const keep = options.keep ?? (() => true);
  const entries = new Map<string, Entry<V>>();
  const stop = feed.onChange((heard) => {
    if (heard === 'all') entries.clear();
    else if (heard.kind === kind) entries.delete(heard.key);
  });

  return {
    async get(key, load) {
      if (!feed.isCurrent()) {
        entries.delete(key);
        return load();
      }
      const hit = entries.get(key);
      if (hit) return 'value' in hit ? hit.value : hit.loading;
      const loading = load();
      const entry: Entry<V> = { loading };
      if (entries.size >= maxEntries) entries.delete(entries.keys().next().value as string);
      entries.set(key, entry);
      try {
        const value = await loading;
        // Asked first: a feed may deliver the changes it has pending right
        // now, and one of them may be a change of this record.
        const current = feed.isCurrent();
        // Still ours: no change of this record was heard while it was read.
        if (entries.get(key) === entry) {
          if (keep(value) && current) entries.set(key, { value });
          else entries.delete(key);
        }
        return value;
      } catch (error) {
        if (entries.get(key) === entry) entries.delete(key);
        throw error;
      }
    },
    delete(key) {
      entries.delete(key);
    },
    get size() {
      return entries.size;
    },
    close: stop,
  };
}
