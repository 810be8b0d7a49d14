import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_SHOP_REDIRECT_URI } from '../../../src/demo/seed-demo.js';
import { startServer, type RunningServer } from '../../../src/http/server.js';
import { openCustomerAccessCheck, type OpenedCustomerAccessCheck } from '../../../src/compose/resource-server.js';
import { InsufficientScope, InvalidToken } from '../../../src/core/errors.js';
import { Browser, exchangeCode, logIn } from '../../helpers/customer-flow.js';
import { basicAuth, form, T0, TEST_AUTH_URL, TEST_BASE_URL } from '../../helpers/build.js';
import { fixedClock } from '../../../src/core/clock.js';
import { postToken } from '../../helpers/wire.js';
import { changeReached } from '../../helpers/change-reached.js';
import { dpopKey } from '../../helpers/dpop.js';
import { runCli } from '../../../src/cli/main.js';
import { MASTER_KEY_FILE } from '../../../src/config/master-key-file.js';

// A platform API checking customer tokens with openCustomerAccessCheck, beside a running Connect.
describe('openCustomerAccessCheck', () => {
  let dataDir: string;
  let server: RunningServer;
  let check: OpenedCustomerAccessCheck;
  const clock = fixedClock(T0);
  const env = () => ({
    PORT: '0',
    CONNECT_DATA_DIR: dataDir,
    CONNECT_LOG_LEVEL: 'silent',
    CONNECT_AUTH_URL: TEST_AUTH_URL,
    CONNECT_BASE_URL: TEST_BASE_URL,
  });

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'connect-rs-'));
    server = await startServer({ env: env(), seedDemo: true, demoRedirectUri: DEMO_SHOP_REDIRECT_URI, print: () => {}, clock });
    check = await openCustomerAccessCheck(env(), clock);
  });

  afterAll(async () => {
    await check?.close();
    await server?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('accepts the current customer access token of a session and refuses it once refreshed', async () => {
    const demo = server.demo!;
    const client = { id: demo.clientId, secret: demo.clientSecret };
    const browser = new Browser(server.app);
    const callback = await logIn(
      browser,
      { response_type: 'code', client_id: demo.clientId, redirect_uri: DEMO_SHOP_REDIRECT_URI, state: 's' },
      { mobile: demo.customer.mobile, pin: demo.customer.pin },
    );
    const tokens = (await exchangeCode(server.app, client, { code: callback.get('code')!, redirect_uri: DEMO_SHOP_REDIRECT_URI })).json<{
      access_token: string;
      refresh_token: string;
    }>();

    const access = await check.verify(tokens.access_token);
    expect(access).toMatchObject({ profileId: demo.customer.profileId, clientId: demo.clientId });

    await expect(check.verify(tokens.refresh_token)).rejects.toBeInstanceOf(InvalidToken);
    await expect(check.verify(undefined)).rejects.toBeInstanceOf(InvalidToken);
    await expect(check.verify(undefined)).rejects.toMatchObject({ credentialsMissing: true });
    await expect(check.verify(tokens.refresh_token)).rejects.toMatchObject({ credentialsMissing: false });

    const refreshed = await postToken(server.app, {
      authorization: basicAuth(client.id, client.secret),
      body: form({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token }),
    });
    expect(refreshed.statusCode).toBe(200);
    // The check held the session; the refresh's change signal (another
    // instance's commit, seen through the database's change counter) ends
    // the old token within a second, with no clock time passing.
    await changeReached(() => check.verify(tokens.access_token).then(() => false, () => true));
    await expect(check.verify(tokens.access_token)).rejects.toThrow(/replaced or revoked/);
    await expect(check.verify(refreshed.json<{ access_token: string }>().access_token)).resolves.toMatchObject({
      profileId: demo.customer.profileId,
      scopes: [],
    });
    // The demo client has no scopes: a check requiring one refuses its token as insufficient, not invalid.
    await expect(check.verify(refreshed.json<{ access_token: string }>().access_token, { scopes: ['profile'] })).rejects.toSatisfy(
      (error) => error instanceof InsufficientScope && error.status === 403 && error.scope === 'profile',
    );
  });

  it('a DPoP-bound token: verifyRequest with a proof of its key, each proof once; never as Bearer, nor with another key', async () => {
    const demo = server.demo!;
    const client = { id: demo.clientId, secret: demo.clientSecret };
    const key = await dpopKey();
    const callback = await logIn(
      new Browser(server.app),
      { response_type: 'code', client_id: demo.clientId, redirect_uri: DEMO_SHOP_REDIRECT_URI, state: 's', prompt: 'login' },
      { mobile: demo.customer.mobile, pin: demo.customer.pin },
    );
    const tokenProof = await key.proof({ htm: 'POST', htu: `${server.urls.authUrl}/token`, iat: clock.nowSeconds() });
    const res = await postToken(server.app, {
      authorization: basicAuth(client.id, client.secret),
      body: form({ grant_type: 'authorization_code', code: callback.get('code')!, redirect_uri: DEMO_SHOP_REDIRECT_URI }),
      headers: { dpop: tokenProof },
    });
    expect(res.json()).toMatchObject({ token_type: 'DPoP' });
    const token = res.json<{ access_token: string }>().access_token;
    const url = 'https://payments.example/payments';
    const proof = await key.proof({ htm: 'GET', htu: url, iat: clock.nowSeconds(), accessToken: token });
    const request = { authorization: `DPoP ${token}`, dpopProofs: [proof], method: 'GET', url };

    await expect(check.verifyRequest(request)).resolves.toMatchObject({ profileId: demo.customer.profileId, jkt: key.jkt });
    expect(check.dpopNonce()).toMatch(/^[0-9a-z]+\.[A-Za-z0-9_-]{43}$/);
    await expect(check.verifyRequest(request)).rejects.toMatchObject({ error: 'invalid_dpop_proof', status: 401 });
    await expect(check.verify(token)).rejects.toThrow('this access token is DPoP-bound');
    await expect(check.verifyRequest({ ...request, authorization: `Bearer ${token}` })).rejects.toBeInstanceOf(InvalidToken);
    const other = await (await dpopKey()).proof({ htm: 'GET', htu: url, iat: clock.nowSeconds(), accessToken: token });
    await expect(check.verifyRequest({ ...request, dpopProofs: [other] })).rejects.toMatchObject({ error: 'invalid_dpop_proof' });
  });

  it('follows master-key rotate within a second: its DPoP nonces are then made under the new master key', async () => {
    const old = readFileSync(join(dataDir, MASTER_KEY_FILE), 'utf8').trim();
    const both = { ...env(), CONNECT_MASTER_KEY: randomBytes(32).toString('base64'), CONNECT_PREVIOUS_MASTER_KEY: old };
    const replacing = await openCustomerAccessCheck(both, clock);
    try {
      // Before the rotation both write under the old key: the same nonce as the check given only it.
      expect(replacing.dpopNonce()).toBe(check.dpopNonce());
      let printed = '';
      const code = await runCli(['master-key', 'rotate'], { env: both, clock, stdout: (t) => void (printed += t), stderr: (t) => void (printed += t) });
      expect(code, printed).toBe(0);
      await changeReached(async () => replacing.dpopNonce() !== check.dpopNonce());
    } finally {
      await replacing.close();
    }
  });

  it('needs CONNECT_AUTH_URL to know the issuer', async () => {
    await expect(openCustomerAccessCheck({ CONNECT_DATA_DIR: dataDir })).rejects.toThrow(/CONNECT_AUTH_URL/);
  });
});
