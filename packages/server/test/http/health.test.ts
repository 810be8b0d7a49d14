import { describe, expect, it } from 'vitest';
import { build } from '../helpers/build.js';
import { expectJson } from './wire.js';

describe('health endpoints', () => {
  it('GET /healthz answers 200 while the process is up', async () => {
    const t = await build();
    const res = await t.app.inject({ method: 'GET', url: '/healthz' });
    expect(res.statusCode).toBe(200);
    expectJson(res);
    expect(res.json()).toEqual({ status: 'ok' });
    expect(res.headers['cache-control']).toBe('no-store');
  });

  it('GET /readyz answers 200 while the database answers', async () => {
    const t = await build();
    const res = await t.app.inject({ method: 'GET', url: '/readyz' });
    expect(res.statusCode).toBe(200);
    expectJson(res);
    expect(res.json()).toEqual({ status: 'ready' });
    expect(res.headers['cache-control']).toBe('no-store');
  });

  it('GET /readyz answers 503 with a JSON body once the database is gone; /healthz stays 200', async () => {
    const t = await build();
    await t.storage.close();
    const res = await t.app.inject({ method: 'GET', url: '/readyz' });
    expect(res.statusCode).toBe(503);
    expectJson(res);
    const body = res.json<Record<string, unknown>>();
    expect(body.status).toBe('unavailable');
    expect(typeof body.error_description).toBe('string');
    expect(res.body).not.toMatch(/destroyed|\/work\/|node_modules|\bat \S+ \(/);
    expect(res.headers['cache-control']).toBe('no-store');

    expect((await t.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
  });
});
