import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { parseChange, type ChangeFeed, type Heard } from '../../core/changes/change-feed.js';
import { monotonicMs } from '../../core/clock.js';
import { CHANGE_SIGNAL_PING_MS, CHANGE_SIGNAL_TRUST_MS } from '../../core/lifetimes.js';

/** The channel the database's triggers announce changes on (migration `2026-11-25T12-20-change-signals`). */
export const CHANGE_CHANNEL = 'connect_changes';

/** How a change feed reports what goes wrong with its connection (never thrown: the feed recovers by itself). */
export interface ChangeFeedOptions {
  /** How long a confirmed signal is trusted, ms (default `CHANGE_SIGNAL_TRUST_MS`). */
  readonly trustMs?: number;
  /** How often the signal is confirmed, ms (default `CHANGE_SIGNAL_PING_MS`). */
  readonly pingMs?: number;
  /** Bound on connecting and on each query of the feed's connection, ms. */
  readonly connectTimeoutMs?: number;
  /** Told when the feed loses or regains its connection. */
  readonly onState?: (state: 'lost' | 'listening', error?: Error) => void;
}

/**
 * The change signal of PostgreSQL (docs/operator-guide.md, "Changes reach
 * every instance"): one connection of its own that `LISTEN`s on
 * {@link CHANGE_CHANNEL}, where the database's triggers `NOTIFY` every change
 * when its transaction commits.
 *
 * A silent loss (a connection that looks open but carries nothing) is
 * caught by confirming the signal: every `pingMs` the feed notifies the
 * channel itself and waits to hear it back. PostgreSQL delivers
 * notifications in commit order, so hearing a ping sent at `t` proves every
 * change committed before `t` was heard. The feed is current only while
 * such a proof is younger than `trustMs`; otherwise caches read the
 * database, and start afresh once it is current again. A broken or silent
 * connection is replaced, with a growing pause between tries (up to 5 s).
 */
export function openPostgresChangeFeed(connectionString: string, options: ChangeFeedOptions = {}): ChangeFeed {
  const trustMs = options.trustMs ?? CHANGE_SIGNAL_TRUST_MS;
  const pingMs = options.pingMs ?? CHANGE_SIGNAL_PING_MS;
  const instance = randomUUID();
  const listeners = new Set<(heard: Heard) => void>();
  /** Pings sent and not yet heard back, by payload: when each was sent. */
  const pending = new Map<string, number>();
  /** The connection that listens; set only once its `LISTEN` succeeded. */
  let client: pg.Client | undefined;
  /** The connection being opened. */
  let opening: pg.Client | undefined;
  /** When the newest ping heard back was sent (monotonic ms); only pings sent after `LISTEN` count. */
  let confirmedAt = Number.NEGATIVE_INFINITY;
  /** Whether `onState('listening')` is owed: told once the first ping after a (re)connect is heard. */
  let announce = false;
  let current = false;
  let closed = false;
  let retryMs = 100;
  let pingCount = 0;
  let reconnect: NodeJS.Timeout | undefined;

  const emit = (heard: Heard) => {
    for (const listener of listeners) {
      try {
        listener(heard);
      } catch {
        // A listener's failure is its own; the others still hear the change.
      }
    }
  };

  const drop = (broken: pg.Client, error?: Error) => {
    if (client !== broken && opening !== broken) return;
    const wasListening = client === broken;
    client = undefined;
    opening = undefined;
    pending.clear();
    // Nothing heard from now on proves anything: not current until a ping
    // sent after a new LISTEN comes back, and whatever is held goes now (a
    // quiet instance may not ask isCurrent() before the next change).
    confirmedAt = Number.NEGATIVE_INFINITY;
    current = false;
    emit('all');
    broken.removeAllListeners('notification');
    broken.on('error', () => {});
    // A silent connection would never answer the goodbye `end()` sends: its socket goes at once.
    broken.connection.stream.destroy();
    void broken.end().catch(() => {});
    if (wasListening) options.onState?.('lost', error);
    schedule();
  };

  const schedule = () => {
    if (closed || reconnect) return;
    reconnect = setTimeout(() => {
      reconnect = undefined;
      void connect();
    }, retryMs);
    reconnect.unref();
    retryMs = Math.min(retryMs * 2, 5000);
  };

  const connect = async () => {
    const timeoutMs = options.connectTimeoutMs ?? 5000;
    // `query_timeout`: a `LISTEN` or a ping the network swallowed fails, and the connection is replaced.
    const next = new pg.Client({ connectionString, connectionTimeoutMillis: timeoutMs, query_timeout: timeoutMs, keepAlive: true });
    next.on('error', (error: Error) => drop(next, error));
    next.on('end', () => drop(next));
    next.on('notification', (message) => {
      if (message.channel !== CHANGE_CHANNEL || message.payload === undefined) return;
      const sentAt = pending.get(message.payload);
      if (sentAt !== undefined) {
        pending.delete(message.payload);
        confirmedAt = Math.max(confirmedAt, sentAt);
        if (announce) {
          announce = false;
          options.onState?.('listening');
        }
        return;
      }
      const change = parseChange(message.payload);
      if (change) emit(change);
    });
    try {
      opening = next;
      await next.connect();
      await next.query(`listen ${CHANGE_CHANNEL}`);
      if (closed || opening !== next) return void next.end().catch(() => {});
      opening = undefined;
      client = next;
      retryMs = 100;
      announce = true;
      ping();
    } catch (error) {
      drop(next, error as Error);
    }
  };

  const isCurrent = () => {
    const ok = client !== undefined && monotonicMs() - confirmedAt < trustMs;
    if (ok !== current) {
      current = ok;
      // Either way what was kept is dropped: changes may have gone unheard.
      emit('all');
    }
    return ok;
  };

  /** The connections with a ping query not yet answered. */
  const pinging = new WeakSet<pg.Client>();

  const ping = () => {
    // A lapse is told to the listeners even when no cache asks.
    isCurrent();
    const listening = client;
    if (!listening) return;
    const now = monotonicMs();
    // A connection that confirmed nothing for three trust windows is silent: replace it.
    if (pending.size > 0 && now - Math.max(confirmedAt, Math.min(...pending.values())) > 3 * trustMs) {
      return drop(listening, new Error('the change signal went silent'));
    }
    for (const [payload, sentAt] of pending) if (now - sentAt > 3 * trustMs) pending.delete(payload);
    // One query at a time on the connection: while a ping has not been
    // answered, the next is not queued behind it (a silent connection would
    // pile them up). The silence is caught above all the same.
    if (pinging.has(listening)) return;
    const payload = `ping:${instance}:${pingCount++}`;
    pending.set(payload, now);
    pinging.add(listening);
    listening
      .query('select pg_notify($1, $2)', [CHANGE_CHANNEL, payload])
      .catch((error: Error) => drop(listening, error))
      .finally(() => pinging.delete(listening));
  };

  const pinger = setInterval(ping, pingMs);
  pinger.unref();
  void connect();

  return {
    isCurrent,
    onChange(listener) {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
    heard: emit,
    async close() {
      closed = true;
      clearInterval(pinger);
      if (reconnect) clearTimeout(reconnect);
      const open = client;
      client = undefined;
      listeners.clear();
      if (open) {
        open.removeAllListeners('notification');
        await open.end().catch(() => {});
      }
    },
  };
}
