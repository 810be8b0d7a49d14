import type { InjectOptions } from 'fastify';
import { describe, expect, it } from 'vitest';
import { basicAuth, build, form } from '../../helpers/build.js';
import { expectJson, FORM } from '../../helpers/wire.js';

const SECURITY_HEADERS = {
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
} as const;

describe('security headers', () => {
  it('are on every response: success, OAuth error, request error, 404, discovery and health', async () => {
    const t = await build();
    const client = await t.createClient();
    const requests: Record<string, InjectOptions> = {
      'token 200': { method: 'POST', url: '/token', headers: { authorization: basicAuth(client.id, client.secret), 'content-type': FORM }, payload: form({ grant_type: 'client_credentials' }) },
      'token 401': { method: 'POST', url: '/token', headers: { 'content-type': FORM }, payload: form({ grant_type: 'client_credentials' }) },
      'token 400 (content type)': { method: 'POST', url: '/token', headers: { 'content-type': 'application/json' }, payload: '{}' },
      'token 413': { method: 'POST', url: '/token', headers: { 'content-type': FORM }, payload: `pad=${'a'.repeat(20_000)}` },
      'token 405': { method: 'GET', url: '/token' },
      'unknown route': { method: 'GET', url: '/nowhere' },
      jwks: { method: 'GET', url: '/.well-known/jwks.json' },
      metadata: { method: 'GET', url: '/.well-known/oauth-authorization-server' },
      healthz: { method: 'GET', url: '/healthz' },
      readyz: { method: 'GET', url: '/readyz' },
    };
    for (const [name, request] of Object.entries(requests)) {
      const res = await t.app.inject(request);
      expect({ name, ...pick(res.headers, Object.keys(SECURITY_HEADERS)) }).toEqual({ name, ...SECURITY_HEADERS });
      expect({ name, csp: res.headers['content-security-policy'] }).toEqual({ name, csp: expect.stringMatching(/frame-ancestors 'none'/) });
      expect({ name, hsts: res.headers['strict-transport-security'] }).toEqual({ name, hsts: undefined });
    }
  });

  it('include HSTS in production, whose public URLs are https://', async () => {
    const t = await build({ environment: 'production' });
    const res = await t.app.inject({ method: 'GET', url: '/healthz' });
    expect(res.headers['strict-transport-security']).toMatch(/^max-age=\d{7,}/);
    expect(res.headers['x-frame-options']).toBe('DENY');
  });
});

describe('unknown routes', () => {
  it('answer 404 with a JSON error that does not echo the query string', async () => {
    const t = await build();
    const res = await t.app.inject({ method: 'GET', url: '/nowhere?code=s3cr3t-value' });
    expect(res.statusCode).toBe(404);
    expectJson(res);
    const body = res.json<Record<string, unknown>>();
    expect(Object.keys(body).sort()).toEqual(['error', 'error_description']);
    expect(body.error).toBe('not_found');
    expect(res.body).not.toContain('s3cr3t-value');
    expect(res.headers['cache-control']).toBe('no-store');
  });
});

function pick(headers: Record<string, unknown>, names: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(names.map((name) => [name, headers[name]]));
}
