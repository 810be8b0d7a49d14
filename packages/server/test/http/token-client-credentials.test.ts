import { describe, expect, it } from 'vitest';
import { basicAuth, build, form, T0, TEST_AUTH_URL, TEST_BASE_URL } from '../helpers/build.js';

const FORM = 'application/x-www-form-urlencoded';

describe('POST /token, grant_type=client_credentials', () => {
  it('issues an RFC 9068 JWT access token to a client using HTTP Basic', async () => {
    const t = await build();
    const client = await t.createClient();
    const res = await t.app.inject({
      method: 'POST',
      url: '/token',
      headers: { authorization: basicAuth(client.id, client.secret), 'content-type': FORM },
      payload: form({ grant_type: 'client_credentials' }),
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers.pragma).toBe('no-cache');
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(['access_token', 'expires_in', 'token_type']);
    expect(body.token_type).toBe('Bearer');
    expect(body.expires_in).toBe(3600);
    const { payload, protectedHeader } = await t.verifyAccessToken(body.access_token);
    expect(protectedHeader).toMatchObject({ alg: 'ES256', typ: 'at+jwt', kid: t.keyRing.signingKey().kid });
    expect(payload).toMatchObject({ iss: TEST_AUTH_URL, aud: TEST_BASE_URL, sub: client.id, client_id: client.id, iat: T0, exp: T0 + 3600 });
    expect(payload.jti).toMatch(/^[0-9a-f-]{36}$/);
  });
});
