import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { AuditEventType, AuditRecord } from '../../src/core/audit/audit-log.js';
import type { FixedClock } from '../../src/core/clock.js';
import type { Storage } from '../../src/core/storage/storage.js';
import { build, type TestApp } from '../helpers/build.js';
import { approveIfAsked, authorizeParams, authorizeUrl, expectClientRedirect } from '../helpers/customer-flow.js';
import { lifecycle, type Lifecycle } from '../helpers/token-session.js';
import { obtainToken } from '../helpers/wire.js';
import { cliWorkspace, type CliWorkspace } from './command-line.js';

/**
 * An operator's commands beside a running app, on one database: the CLI
 * in-process on a SQLite data folder or on a PostgreSQL database, and an app
 * built on the same database, master key and clock.
 */
export interface OperatorBench {
  readonly engine: 'sqlite' | 'postgres';
  readonly w: CliWorkspace;
  readonly t: TestApp;
  readonly clock: FixedClock;
  /** Another app on the same database, master key and clock, with nothing cached yet. */
  freshApp(): Promise<TestApp>;
  /** The audit events of one type, oldest first. */
  audit(type: AuditEventType): Promise<AuditRecord[]>;
}

/** Opens the bench; `postgres` (a fresh database and a way to open storages on it) picks PostgreSQL. */
export async function operatorBench(postgres?: { url: string; open: () => TestApp['storage'] }): Promise<OperatorBench> {
  if (!postgres) {
    const w = cliWorkspace();
    // The first command creates the data folder, the database and the sandbox master key.
    await w.cliJson(['migrate']);
    const t = await w.app();
    return {
      engine: 'sqlite',
      w,
      t,
      clock: w.clock,
      freshApp: () => w.app(),
      audit: (type) => t.storage.audit.listAuditEvents({ type, limit: 1000 }),
    };
  }
  const masterKey = randomBytes(32);
  const w = cliWorkspace({ env: { DATABASE_URL: postgres.url, CONNECT_MASTER_KEY: masterKey.toString('base64') } });
  const t = await build({ storage: postgres.open(), masterKey, clock: w.clock });
  return {
    engine: 'postgres',
    w,
    t,
    clock: w.clock,
    freshApp: () => build({ storage: postgres.open(), masterKey, clock: w.clock }),
    audit: (type) => t.storage.audit.listAuditEvents({ type, limit: 1000 }),
  };
}

/** A customer logged in through a refresh-enabled client, with what a client may hold for them. */
export interface CustomerHoldings extends Lifecycle {
  /** A second token session of the same client. */
  readonly second: Lifecycle['tokens'];
  /** Codes issued and not exchanged. */
  readonly codes: readonly [string, string];
  /** A client access token of the client, for `POST /tokens`. */
  readonly bearer: string;
}

/** Logs a customer in on the bench's app and collects tokens, codes and a client access token. */
export async function customerHoldings(bench: OperatorBench): Promise<CustomerHoldings> {
  const s = await lifecycle({ t: bench.t });
  const second = await s.newSession();
  const code = async () => expectClientRedirect(await approveIfAsked(s.browser, await s.browser.get(authorizeUrl(authorizeParams(s.client))))).get('code') ?? '';
  const codes = [await code(), await code()] as const;
  const bearer = await obtainToken(bench.t, s.client);
  return { ...s, second, codes, bearer };
}

/** How many sessions of `url`'s database are waiting for a lock. */
export async function lockWaiters(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`);
    return (rows[0] as { n: number }).n;
  } finally {
    await client.end();
  }
}

/** Whether some session of `url`'s database is waiting for a lock. */
export async function someoneWaitsForALock(url: string): Promise<boolean> {
  return (await lockWaiters(url)) > 0;
}

/** Waits (up to 5 s) until at least `count` sessions of `url`'s database wait for a lock; whether they did. */
export async function untilLockWaiters(url: string, count: number): Promise<boolean> {
  for (let i = 0; i < 200; i++) {
    if ((await lockWaiters(url)) >= count) return true;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return false;
}

/**
 * A storage whose code exchanges, while `gate.on`, stop between their two
 * steps (after the code is read and the tokens are minted, before the code
 * is consumed with its token session) until `gate.open()`.
 */
export function pausingBetweenRedeemSteps(inner: Storage) {
  let reached!: () => void;
  let open!: () => void;
  const gate = {
    on: false,
    reached: new Promise<void>((resolve) => (reached = resolve)),
    opened: new Promise<void>((resolve) => (open = resolve)),
    open: () => open(),
  };
  const codes: Storage['codes'] = {
    ...inner.codes,
    async redeemAuthorizationCode(...args) {
      if (gate.on) {
        reached();
        await gate.opened;
      }
      return inner.codes.redeemAuthorizationCode(...args);
    },
  };
  return { storage: { ...inner, codes } satisfies Storage, gate };
}

/**
 * Makes every token session insert into `url`'s database wait, inside its
 * statement (after it took its share locks), until `release()`: a trigger
 * waits for an advisory lock this helper holds. `drop()` removes the trigger.
 */
export async function holdingTokenSessionInserts(url: string): Promise<{ release(): Promise<void>; drop(): Promise<void> }> {
  const holder = new pg.Client({ connectionString: url });
  await holder.connect();
  await holder.query(`CREATE FUNCTION test_hold_token_sessions() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN PERFORM pg_advisory_xact_lock_shared(4242); RETURN NEW; END $$`);
  await holder.query('CREATE TRIGGER test_hold BEFORE INSERT ON token_sessions FOR EACH ROW EXECUTE FUNCTION test_hold_token_sessions()');
  await holder.query('SELECT pg_advisory_lock(4242)');
  let released = false;
  const release = async () => {
    if (released) return;
    released = true;
    await holder.query('SELECT pg_advisory_unlock(4242)');
  };
  return {
    release,
    async drop() {
      await release();
      await holder.query('DROP TRIGGER IF EXISTS test_hold ON token_sessions');
      await holder.query('DROP FUNCTION IF EXISTS test_hold_token_sessions()');
      await holder.end();
    },
  };
}
