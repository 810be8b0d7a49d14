import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { openStorage } from '../../../src/storage/kysely/open-storage.js';
import type { Storage } from '../../../src/core/storage/storage.js';
import { build, type TestApp } from '../../helpers/build.js';
import { changeReached } from '../../helpers/change-reached.js';
import { noticePostgresSkipped, postgresAdminUrl, usePostgresStorage } from '../../helpers/postgres.js';
import { postTokens, revoke, REFRESH_GRANTS } from '../../helpers/token-session.js';
import { obtainToken } from '../../helpers/wire.js';

/**
 * Whether a client access token was revoked is kept in memory until the
 * change signal announces its revocation (docs/operator-guide.md, "Changes
 * reach every instance"): a token in use costs no read per request, and a
 * revocation on one instance is refused on every other within a second.
 */

/** Whether `app` still takes `bearer`: a `POST /tokens` without a body gets 400 past the bearer check, 401 at it. */
async function takes(t: TestApp, bearer: string): Promise<boolean> {
  const res = await postTokens(t.app, { bearer });
  expect([400, 401]).toContain(res.statusCode);
  return res.statusCode === 400;
}

function revocationReaches(engine: string, open: () => Storage) {
  it(`${engine}: a revocation on one instance is refused at once there and within a second on another that held the token`, async () => {
    const storage = open();
    const a = await build({ storage });
    const b = await build({ storage, clock: a.clock, masterKey: a.masterKey });
    const client = await a.createClient({ grants: REFRESH_GRANTS });
    const bearer = await obtainToken(a, client);
    // Both instances have checked the token, and hold "not revoked".
    expect(await takes(a, bearer)).toBe(true);
    expect(await takes(b, bearer)).toBe(true);

    expect((await revoke(a.app, client, bearer)).statusCode).toBe(200);
    expect(await takes(a, bearer)).toBe(false);
    await changeReached(async () => !(await takes(b, bearer)));
  });
}

describe('revoked client access tokens across instances', () => {
  revocationReaches('SQLite', () => {
    const dir = mkdtempSync(join(tmpdir(), 'connect-revocations-'));
    const storage = openStorage({ engine: 'sqlite', path: join(dir, 'connect.db') });
    onTestFinished(async () => {
      await storage.close();
      rmSync(dir, { recursive: true, force: true });
    });
    return storage;
  });
  noticePostgresSkipped('revoked client access tokens across instances');
  // Its own block: the PostgreSQL set-up runs for its tests only, never the SQLite one above.
  describe.skipIf(!postgresAdminUrl)('PostgreSQL', () => {
    const pg = usePostgresStorage();
    revocationReaches('PostgreSQL', () => pg.open());
  });
});
