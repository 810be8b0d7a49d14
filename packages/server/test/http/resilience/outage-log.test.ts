import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createTestDatabase, noticePostgresSkipped, postgresAdminUrl } from '../../helpers/postgres.js';
import { startTcpProxy, throughProxy } from '../../helpers/tcp-proxy.js';
import { lifecycle, refreshAtToken } from '../../helpers/token-session.js';
import { basicAuth, form } from '../../helpers/build.js';
import { postToken } from '../../helpers/wire.js';

noticePostgresSkipped('the log of a database outage');

type LogLine = Record<string, any>;

/**
 * A database outage under load, as an operator reads it in the logs
 * (docs/operator-guide.md, "When a dependency fails"): one line when it
 * starts, with the cause; one when it ends; one line per request; no stack.
 * The count lines every 10 seconds are proven on an injected clock
 * (test/unit/compose/outage-log.test.ts); here the outage is shorter.
 */
describe.skipIf(!postgresAdminUrl)('the log of a database outage under load', () => {
  it('one line when it starts (with the cause), one when it ends, exactly one line per request, never a stack', async () => {
    const database = await createTestDatabase({ migrated: true });
    const target = new URL(database.url);
    const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
    onTestFinished(async () => {
      await proxy.close();
      await database.drop();
    });
    // The password of the database URL must never reach the logs.
    const url = new URL(throughProxy(database.url, proxy));
    url.password = 'not-needed-s3cret';
    const { t, client, tokens } = await lifecycle({
      database: { engine: 'postgres', url: url.href },
      env: { CONNECT_DB_TIMEOUT_MS: '500' },
      captureLogs: true,
    });
    const before = t.logs.length;

    let sent = 0;
    const statuses: number[] = [];
    let stop = false;
    /** One of several clients, each sending a refresh or a client_credentials request after the other. */
    const worker = async (n: number) => {
      for (let i = 0; !stop; i++) {
        sent++;
        const res =
          (n + i) % 2 === 0
            ? await refreshAtToken(t.app, client, tokens.refreshToken)
            : await postToken(t.app, { authorization: basicAuth(client.id, client.secret), body: form({ grant_type: 'client_credentials' }) });
        statuses.push(res.statusCode);
      }
    };
    const load = Array.from({ length: 6 }, (_, n) => worker(n));

    await sleep(300);
    await proxy.cut();
    await sleep(2000);
    await proxy.restore();
    // The outage ends with the first success a second after the last failure.
    const healed = performance.now();
    const ended = () => t.logs.slice(before).some((line) => line.includes('"outage":"ended"'));
    // The change signal reconnects on its own schedule: its "back" line is awaited too.
    const signalBack = () => t.logs.slice(before).some((line) => line.includes('"msg":"change signal back"'));
    while (!(ended() && signalBack()) && performance.now() - healed < 10_000) await sleep(100);
    // Load goes on after the heal until enough requests succeeded (a loaded machine answers fewer a second).
    const succeeded = () => statuses.filter((status) => status === 200).length;
    await sleep(300);
    while (succeeded() <= 20 && performance.now() - healed < 20_000) await sleep(100);
    stop = true;
    await Promise.all(load);

    const lines = t.logs.slice(before).map((line) => JSON.parse(line) as LogLine);
    const started = lines.filter((line) => line.outage === 'started');
    const endedLines = lines.filter((line) => line.outage === 'ended');
    const requestLines = lines.filter((line) => line.msg === 'request completed' || line.msg === 'request errored');
    const failed = statuses.filter((status) => status === 503).length;

    // Under load: many requests failed, and as many succeeded around the outage.
    expect(failed).toBeGreaterThan(20);
    expect(statuses.filter((status) => status === 200).length).toBeGreaterThan(20);
    expect(statuses.every((status) => status === 200 || status === 503)).toBe(true);

    expect(started).toHaveLength(1);
    expect(started[0]).toMatchObject({ level: 50, dependency: 'database', msg: 'database unreachable' });
    expect(started[0]?.cause).toMatch(/^StorageUnavailable\b.*\S/);
    expect(endedLines).toHaveLength(1);
    expect(endedLines[0]).toMatchObject({ level: 40, dependency: 'database', msg: 'database reachable again', failedRequests: failed });
    expect(endedLines[0]?.downForMs).toBeGreaterThan(1000);
    expect(endedLines[0]?.downForMs).toBeLessThan(10_000);

    // Exactly one line per request, each 503 naming the database.
    expect(requestLines).toHaveLength(sent);
    expect(new Set(requestLines.map((line) => line.reqId)).size).toBe(sent);
    const refusedLines = requestLines.filter((line) => line.statusCode === 503);
    expect(refusedLines).toHaveLength(failed);
    for (const line of refusedLines) expect(line.unavailable).toBe('database');

    // Besides the request lines: the outage's two, and the change signal's lost and back.
    const others = lines.filter((line) => !requestLines.includes(line));
    expect(others.map((line) => line.msg).sort()).toEqual(
      ['change signal back', 'change signal lost; caches read the database until it is back', 'database reachable again', 'database unreachable'].sort(),
    );
    const logged = t.logs.slice(before).join('\n');
    expect(logged).not.toMatch(/"stack"|\bat \S+ \(|"err"/);
    expect(logged).not.toContain('not-needed-s3cret');
  });
});
