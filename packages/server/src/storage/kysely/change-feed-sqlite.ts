import { parseChange, type ChangeFeed, type Heard } from '../../core/changes/change-feed.js';
import { monotonicMs } from '../../core/clock.js';
import { CHANGE_SIGNAL_PING_MS, CHANGE_SIGNAL_SQLITE_POLL_MS } from '../../core/lifetimes.js';
import type { EmbeddedSqlite } from './embedded-sqlite.js';

/** How long SQLite keeps announced changes: far longer than any instance takes to read them. */
const CHANGE_LOG_KEEP_SECONDS = 60;

/**
 * The change signal of SQLite (docs/operator-guide.md, "Changes reach every
 * instance"): the database's triggers add a row to `change_log` in the
 * transaction of every change. When a cache would use what it holds, the
 * feed asks the database's change counter — `PRAGMA data_version` moves
 * when another process commits, `total_changes()` when this one does — and
 * only when either moved reads the rows it has not seen. It asks at once
 * after this process used the database (its connection's `operations`
 * moved), otherwise at most every `CHANGE_SIGNAL_SQLITE_POLL_MS` (so a
 * busy cache costs next to nothing and another process's change is seen
 * within that time). Nothing can be missed, so the feed is always current,
 * except inside a transaction on this connection (what it wrote is not
 * committed yet): caches then read the database.
 *
 * @param database the storage's own connection.
 * @param prune deletes announced changes older than the seconds it is given; run every minute.
 */
export function openSqliteChangeFeed(database: EmbeddedSqlite, prune: (olderThanSeconds: number) => Promise<unknown>): ChangeFeed {
  const listeners = new Set<(heard: Heard) => void>();
  const countersQuery = database.prepare('select (select data_version from pragma_data_version) as v, total_changes() as t');
  const counters = () => countersQuery.get() as { v: number; t: number } | undefined;
  const sinceQuery = database.prepare('select seq, kind, key from change_log where seq > ? and seq <= ? order by seq');
  const since = (after: number, upTo: number) => sinceQuery.all([after, upTo]) as Array<{ seq: number; kind: string; key: string }>;
  // The highest seq ever given out (rows may since have been pruned).
  const highestQuery = database.prepare("select coalesce((select seq from sqlite_sequence where name = 'change_log'), 0) as seq");
  const highest = () => highestQuery.get() as { seq: number } | undefined;
  let last = highest()?.seq ?? 0;
  let version = -1;
  let total = -1;
  // The connection's `operations` once the counters were last read (after those reads), and when.
  let operationsSeen = -1;
  let askedAt = Number.NEGATIVE_INFINITY;

  const emit = (heard: Heard) => {
    for (const listener of listeners) {
      try {
        listener(heard);
      } catch {
        // A listener's failure is its own; the others still hear the change.
      }
    }
  };

  const pruner = setInterval(() => {
    void prune(CHANGE_LOG_KEEP_SECONDS).catch(() => {});
  }, CHANGE_LOG_KEEP_SECONDS * 1000);
  pruner.unref();
  // Changes are also delivered when no cache asks (keys serve the JWKS without asking).
  const poller = setInterval(() => feed.isCurrent(), CHANGE_SIGNAL_PING_MS);
  poller.unref();

  const feed: ChangeFeed = {
    isCurrent() {
      const now = monotonicMs();
      // Nothing reached the connection since it was found open, outside a
      // transaction, with every change read: so it still is, and another
      // process's commit waits for the next poll.
      if (database.operations === operationsSeen && now - askedAt < CHANGE_SIGNAL_SQLITE_POLL_MS) return true;
      if (!database.open || database.inTransaction) return false;
      try {
        const read = counters();
        if (!read) return false;
        if (read.v !== version || read.t !== total) {
          version = read.v;
          total = read.t;
          // The newest first: a commit of another process between the two
          // reads is then read the next time, not skipped.
          const newest = highest()?.seq ?? last;
          const rows = since(last, newest);
          // Rows after `last` were pruned before they were read (this process
          // was paused for over a minute): what they said is lost, so
          // everything held goes.
          if ((rows[0]?.seq ?? newest + 1) > last + 1) emit('all');
          for (const row of rows) {
            const change = parseChange(`${row.kind}:${row.key}`);
            if (change) emit(change);
          }
          last = Math.max(last, newest);
        }
        operationsSeen = database.operations;
        askedAt = now;
        return true;
      } catch {
        return false;
      }
    },
    onChange(listener) {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
    heard: emit,
    async close() {
      clearInterval(pruner);
      clearInterval(poller);
      listeners.clear();
    },
  };
  return feed;
}
