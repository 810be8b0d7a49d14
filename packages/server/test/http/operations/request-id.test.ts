import { describe, expect, it } from 'vitest';
import { basicAuth, build, form } from '../../helpers/build.js';
import { postToken } from '../../helpers/wire.js';

/**
 * Every response carries `X-Request-Id`: the request's own when it is 1 to
 * 128 characters of `A-Z a-z 0-9 . _ : -`, otherwise a fresh UUID. The same
 * ID is in the request's log line and in the audit events it caused.
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const BAD_SECRET = `csk_sandbox_${'x'.repeat(43)}`;

interface LogLine {
  reqId?: string;
  msg?: string;
}

describe('X-Request-Id', () => {
  it("echoes a well-formed incoming ID, on success, on a 404 and on an error", async () => {
    const t = await build();
    for (const id of ['a', 'lb-7f3a:42.x_Y', 'Z'.repeat(128)]) {
      for (const url of ['/healthz', '/no-such-page']) {
        const res = await t.app.inject({ method: 'GET', url, headers: { 'x-request-id': id } });
        expect(res.headers['x-request-id']).toBe(id);
      }
      const failed = await postToken(t.app, { authorization: basicAuth('cid_sandbox_nobody', BAD_SECRET), body: form({ grant_type: 'client_credentials' }), headers: { 'x-request-id': id } });
      expect(failed.statusCode).toBe(401);
      expect(failed.headers['x-request-id']).toBe(id);
    }
  });

  it('gives a fresh UUID to a request without one, never a counter, and never the same twice', async () => {
    const a = await build();
    const b = await build();
    const ids = [];
    for (const t of [a, b]) {
      for (let i = 0; i < 5; i++) ids.push((await t.app.inject({ method: 'GET', url: '/healthz' })).headers['x-request-id']);
    }
    for (const id of ids) expect(id).toMatch(UUID);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('replaces an oversized or malformed ID with a fresh UUID, never an error and never echoed', async () => {
    const t = await build({ captureLogs: true });
    const bad = ['', 'Z'.repeat(129), 'has space', 'semi;colon', 'new\tline', 'ünïcode', '<script>', 'a/b', 'x'.repeat(10_000)];
    for (const id of bad) {
      const res = await t.app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': id } });
      expect(res.statusCode).toBe(200);
      expect(res.headers['x-request-id']).toMatch(UUID);
      if (id !== '') expect(t.logs.join('')).not.toContain(id);
    }
    // Two headers: neither is taken.
    const twice = await t.app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': ['one', 'two'] } });
    expect(twice.statusCode).toBe(200);
    expect(twice.headers['x-request-id']).toMatch(UUID);
  });

  it("is the request line's reqId", async () => {
    const t = await build({ captureLogs: true });
    await t.app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'trace-1' } });
    const fresh = await t.app.inject({ method: 'GET', url: '/healthz' });
    const lines = t.logs.join('').trim().split('\n').map((line) => JSON.parse(line) as LogLine);
    const completed = lines.filter((line) => line.msg === 'request completed').map((line) => line.reqId);
    expect(completed).toEqual(['trace-1', fresh.headers['x-request-id']]);
  });

  it('is recorded with the audit events the request caused', async () => {
    const t = await build();
    const given = await postToken(t.app, { authorization: basicAuth('cid_sandbox_nobody', BAD_SECRET), body: form({ grant_type: 'client_credentials' }), headers: { 'x-request-id': 'trace-audit-1' } });
    // A repeat in the same minute only counts into the first event, which keeps the first request's ID.
    await postToken(t.app, { authorization: basicAuth('cid_sandbox_nobody', BAD_SECRET), body: form({ grant_type: 'client_credentials' }) });
    t.clock.advance(60);
    const fresh = await postToken(t.app, { authorization: basicAuth('cid_sandbox_nobody', BAD_SECRET), body: form({ grant_type: 'client_credentials' }) });
    const events = await t.storage.audit.listAuditEvents({ limit: 10, type: 'client.authentication_failed' });
    expect(events.map((e) => e.requestId)).toEqual(['trace-audit-1', fresh.headers['x-request-id']]);
    expect(given.headers['x-request-id']).toBe('trace-audit-1');
  });
});
