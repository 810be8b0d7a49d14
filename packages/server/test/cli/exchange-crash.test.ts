import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { systemClock } from '../../src/core/clock.js';
import { issueCode } from '../../src/core/journey/code.js';
import { openStorage } from '../../src/storage/kysely/open-storage.js';
import type { DatabaseLocation } from '../../src/core/storage/storage.js';
import { basicAuth, form } from '../helpers/build.js';
import { createTestDatabase, noticePostgresSkipped, postgresAdminUrl } from '../helpers/postgres.js';
import { cliJson, requireBuiltCli, startServe, type ProcessSetting } from '../helpers/processes.js';
import { openRawDatabase } from '../helpers/raw-database.js';

/**
 * `kill -9` of a `connect-auth serve` process in the middle of code
 * exchanges: whatever instant each exchange was at, no code is left
 * consumed without its token session (docs/journey.md, "The code"); an
 * exchange the crash cut either left its code unused or completed whole.
 */

const REDIRECT_URI = 'https://shop.example/callback';
const MOBILE = '+639170000001';
const CODES = 600;
const WORKERS = 12;
/** Exchanges answered before the kill: the load is running at full speed by then. */
const ANSWERED_BEFORE_KILL = 60;

beforeAll(requireBuiltCli);

const ORPHANS = 'consumed_at is not null and not exists (select 1 from token_sessions s where s.code_hash = authorization_codes.code_hash)';

async function setting(engine: 'sqlite' | 'postgres'): Promise<{ s: ProcessSetting; location: DatabaseLocation }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'connect-crash-'));
  onTestFinished(() => rmSync(dataDir, { recursive: true, force: true }));
  const env: Record<string, string> = { CONNECT_DATA_DIR: dataDir, CONNECT_ENVIRONMENT: 'sandbox', CONNECT_MASTER_KEY: randomBytes(32).toString('base64') };
  if (engine === 'postgres') {
    const database = await createTestDatabase();
    onTestFinished(() => database.drop());
    env.DATABASE_URL = database.url;
    return { s: { cwd: dataDir, env }, location: { engine: 'postgres', url: database.url } };
  }
  return { s: { cwd: dataDir, env }, location: { engine: 'sqlite', path: join(dataDir, 'connect-sandbox.db') } };
}

function suite(engine: 'sqlite' | 'postgres') {
  it(`${engine}: kill -9 under exchange load leaves no consumed code without its token session`, { timeout: 90_000 }, async () => {
    const { s, location } = await setting(engine);
    await cliJson(s, ['migrate']);
    const created = await cliJson<{ clientId: string; clientSecret: string }>(s, [
      'clients', 'create', '--name', 'Shop', '--redirect-uri', REDIRECT_URI, '--grants', 'client_credentials,authorization_code,refresh_token',
    ]);
    const customer = await cliJson<{ profileId: string; mobile: string }>(s, ['customers', 'create', '--mobile', MOBILE, '--pin', '3817']);

    // Codes issued straight into the database, as the journey issues them.
    const storage = openStorage(location);
    const codes: string[] = [];
    try {
      for (let i = 0; i < CODES; i++) {
        const location = await issueCode(
          { clientId: created.clientId, redirectUri: REDIRECT_URI, state: null, codeChallenge: null, scopes: [] },
          { profileId: customer.profileId, mobile: MOBILE },
          null,
          storage.codes,
          { clock: systemClock, lifetimes: { codeSeconds: 300 }, issuer: 'http://connect.test' },
        );
        codes.push(new URL(location).searchParams.get('code') ?? '');
      }
    } finally {
      await storage.close();
    }

    const server = await startServe(s);
    const counts = { ok: 0, refused: 0, cut: 0 };
    let killed: Promise<void> | undefined;
    const next = codes.values();
    const worker = async () => {
      for (const code of next) {
        try {
          const res = await fetch(new URL('/token', server.address), {
            method: 'POST',
            headers: { authorization: basicAuth(created.clientId, created.clientSecret), 'content-type': 'application/x-www-form-urlencoded' },
            body: form({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI }),
            signal: AbortSignal.timeout(20_000),
          });
          await res.arrayBuffer();
          if (res.status === 200) counts.ok++;
          else counts.refused++;
        } catch {
          // The server died under this request.
          counts.cut++;
          return;
        }
        if (counts.ok >= ANSWERED_BEFORE_KILL) killed ??= server.kill();
      }
    };
    await Promise.all(Array.from({ length: WORKERS }, worker));
    await killed;

    expect(counts.ok).toBeGreaterThanOrEqual(ANSWERED_BEFORE_KILL);
    // Every exchange was for a fresh code: none was refused.
    expect(counts.refused).toBe(0);
    // The kill came in the middle of the load: requests were in flight.
    expect(counts.cut).toBeGreaterThan(0);
    expect(counts.ok + counts.cut).toBeLessThan(CODES);

    const raw = await openRawDatabase(location);
    expect(await raw.count('authorization_codes', ORPHANS)).toBe(0);
    const consumed = await raw.count('authorization_codes', 'consumed_at is not null');
    // Every answered exchange consumed a code; a cut one may have too, with its whole session.
    expect(consumed).toBeGreaterThanOrEqual(counts.ok);
    expect(consumed).toBeLessThanOrEqual(counts.ok + counts.cut);
    expect(await raw.count('token_sessions', 'code_hash is not null')).toBe(consumed);
  });
}

describe('a server process killed in the middle of code exchanges', () => {
  suite('sqlite');
  noticePostgresSkipped('exchange crash');
  if (postgresAdminUrl) suite('postgres');
});
