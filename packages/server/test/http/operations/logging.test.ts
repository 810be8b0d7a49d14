import { describe, expect, it } from 'vitest';
import { basicAuth, build, form } from '../../helpers/build.js';
import { postToken } from '../../helpers/wire.js';

interface LogLine {
  readonly msg?: string;
  readonly reqId?: string;
  readonly method?: string;
  readonly path?: string;
  readonly statusCode?: number;
  readonly responseTime?: number;
}

describe('request logging', () => {
  it('logs each request, and never a client secret, an access token or an Authorization header', async () => {
    const t = await build({ captureLogs: true });
    const client = await t.createClient();
    const wrongSecret = `csk_sandbox_${'W'.repeat(43)}`;
    const goodBasic = basicAuth(client.id, client.secret);
    const badBasic = basicAuth(client.id, wrongSecret);
    const grant = { grant_type: 'client_credentials' };

    const responses = [
      await postToken(t.app, { authorization: goodBasic, body: form(grant) }),
      await postToken(t.app, { body: form({ ...grant, client_id: client.id, client_secret: client.secret }) }),
      await postToken(t.app, { authorization: badBasic, body: form(grant) }),
      await postToken(t.app, { body: form({ ...grant, client_id: client.id, client_secret: wrongSecret }) }),
      // Refused before authentication, with the secret still in the request.
      await postToken(t.app, { authorization: goodBasic, body: form({ ...grant, client_secret: client.secret }) }),
      await postToken(t.app, { body: form([['grant_type', 'client_credentials'], ['client_secret', client.secret], ['client_secret', client.secret]]) }),
      await postToken(t.app, { authorization: goodBasic, body: form({ grant_type: 'password', password: client.secret }) }),
      await postToken(t.app, { contentType: 'application/json', body: JSON.stringify({ ...grant, client_secret: client.secret }) }),
      await postToken(t.app, { authorization: goodBasic, body: `${form(grant)}&pad=${'a'.repeat(20_000)}` }),
    ];
    expect(responses.map((res) => res.statusCode)).toEqual([200, 200, 401, 401, 400, 400, 400, 400, 413]);
    const tokens = responses.slice(0, 2).map((res) => res.json<{ access_token: string }>().access_token);

    const text = t.logs.join('');
    const lines = text.trim().split('\n').map((line) => JSON.parse(line) as LogLine);

    // Every request appears once, with its method, path and final status.
    const completed = lines.filter((line) => line.msg === 'request completed');
    for (const line of completed) {
      expect(line).toMatchObject({ method: 'POST', path: '/token', remoteAddress: '127.0.0.1' });
      expect(line.responseTime).toBeGreaterThanOrEqual(0);
    }
    expect(completed.map((line) => line.statusCode)).toEqual(responses.map((res) => res.statusCode));
    expect(new Set(completed.map((line) => line.reqId)).size).toBe(responses.length);

    const secretsNeverLogged = {
      'client secret': client.secret,
      'random part of the client secret': client.secret.replace(/^csk_sandbox_/, ''),
      'wrong secret': wrongSecret,
      'Authorization header': goodBasic,
      'base64 of the Authorization header': goodBasic.replace(/^Basic /, ''),
      'wrong Authorization header': badBasic.replace(/^Basic /, ''),
      ...Object.fromEntries(
        tokens.flatMap((token, i) => {
          const [, payload, signature] = token.split('.');
          return [
            [`access token ${i}`, token],
            [`access token ${i} claims`, payload],
            [`access token ${i} signature`, signature],
          ];
        }),
      ),
    };
    for (const [what, value] of Object.entries(secretsNeverLogged)) {
      expect({ what, logged: text.includes(value as string) }).toEqual({ what, logged: false });
    }
    expect(text).not.toMatch(/"authorization"/i);
  });

  it("binds the request ID to a request's other lines, as to its request line", async () => {
    const t = await build({ captureLogs: true });
    const res = await postToken(t.app, { authorization: basicAuth('cid_sandbox_nobody', `csk_sandbox_${'x'.repeat(43)}`), body: form({ grant_type: 'client_credentials' }) });
    expect(res.statusCode).toBe(401);
    const lines = t.logs.join('').trim().split('\n').map((line) => JSON.parse(line) as LogLine & { error?: string });
    const failure = lines.find((line) => line.error === 'invalid_client');
    const completed = lines.find((line) => line.msg === 'request completed');
    expect(failure?.reqId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(completed?.reqId).toBe(failure?.reqId);
  });

  it('logs the path of a request without its query string', async () => {
    const t = await build({ captureLogs: true });
    const res = await t.app.inject({ method: 'GET', url: '/authorize?client_id=cid_sandbox_x&state=S3CR3T-STATE&user_id=585676066295' });
    const completed = t.logs
      .join('')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as LogLine)
      .filter((line) => line.msg === 'request completed');
    expect(completed).toHaveLength(1);
    expect(completed[0]).toMatchObject({ method: 'GET', path: '/authorize', statusCode: res.statusCode });
    expect(t.logs.join('')).not.toContain('S3CR3T-STATE');
    expect(t.logs.join('')).not.toContain('585676066295');
  });
});
