/**
 * The change signal: how a running instance learns, within a second, that a
 * record it may hold in memory changed in the database — whoever changed it
 * (another instance, a `connect-auth` command). See docs/operator-guide.md,
 * "Changes reach every instance".
 *
 * The database announces every change that matters in the same transaction
 * as the change itself (triggers), so a change can never be committed
 * without its signal. Each engine delivers the signals its own way
 * (`storage/kysely/change-feed-*.ts`).
 */

/** What changed: a client, a customer, a customer token session (`sid`), the keys, or a client access token's revocation (`jti`). */
export type ChangeKind = 'client' | 'customer' | 'session' | 'keys' | 'token';

/** One change: its kind and the ID of the record (empty for `keys`). */
export interface Change {
  readonly kind: ChangeKind;
  readonly key: string;
}

/**
 * What a listener hears: one change, or `'all'` when changes may have been
 * missed (the signal was lost or silent for too long) and everything held
 * in memory must be read again.
 */
export type Heard = Change | 'all';

/** The change signal as caches use it. */
export interface ChangeFeed {
  /**
   * Whether every change committed up to (at most a second) ago has been
   * heard, so that what a cache holds may be used. Synchronous and cheap: it
   * is asked on every cache hit. While it says `false` caches read the
   * database every time; when it turns `true` again they start afresh.
   */
  isCurrent(): boolean;
  /** Calls `listener` for every change heard from now on; returns how to stop. */
  onChange(listener: (heard: Heard) => void): () => void;
  /**
   * Delivers a change this process has just made and committed, at once,
   * before the database's own signal comes back (docs/tokens.md, "Refresh").
   */
  heard(change: Change): void;
  /** Stops listening. */
  close(): Promise<void>;
}

/**
 * A feed fed only by its process's own {@link ChangeFeed.heard} calls:
 * for a database no other process can reach (SQLite `:memory:`) and for
 * tests of caches. Always current.
 */
export function localChangeFeed(): ChangeFeed & { readonly listeners: number } {
  const listeners = new Set<(heard: Heard) => void>();
  return {
    get listeners() {
      return listeners.size;
    },
    isCurrent: () => true,
    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    heard(change) {
      for (const listener of listeners) listener(change);
    },
    async close() {
      listeners.clear();
    },
  };
}

/** Parses a change as the database announces it (`kind:key`); `undefined` for anything else. */
export function parseChange(text: string): Change | undefined {
  const colon = text.indexOf(':');
  const kind = colon < 0 ? text : text.slice(0, colon);
  const key = colon < 0 ? '' : text.slice(colon + 1);
  if (kind !== 'client' && kind !== 'customer' && kind !== 'session' && kind !== 'keys' && kind !== 'token') return undefined;
  return { kind, key };
}
