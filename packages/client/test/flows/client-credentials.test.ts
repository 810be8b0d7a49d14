import { fixedClock } from '@connect-auth/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConnectError, InvalidClient, InvalidResponse, isConnectError, requestClientToken } from '../../src/index.js';
import { startConnect, type TestConnect } from '../support/test-connect.js';

// requestClientToken: one request, against a real Connect server on an ephemeral port.
let connect: TestConnect;

beforeAll(async () => {
  connect = await startConnect();
});

afterAll(async () => {
  await connect?.close();
});

describe('requestClientToken', () => {
  it('gets a client-credentials token, its expiry counted on the injected clock', async () => {
    const clock = fixedClock(1_900_000_000);
    const { clientId, clientSecret } = connect.demo;
    const token = await requestClientToken({ authUrl: connect.authUrl, clientId, clientSecret, clock });
    expect(token.tokenType).toBe('Bearer');
    expect(token.expiresIn).toBe(3600);
    expect(token.expiresAt).toBe(1_900_000_000 + 3600);
    expect(token.accessToken.split('.')).toHaveLength(3);
  });

  it('accepts an auth URL with a trailing slash', async () => {
    const { clientId, clientSecret } = connect.demo;
    const token = await requestClientToken({ authUrl: `${connect.authUrl}/`, clientId, clientSecret });
    expect(token.accessToken).toEqual(expect.any(String));
  });

  it('raises invalid_client as a typed error for a wrong secret, without the secret in the message', async () => {
    const secret = 'csk_sandbox_wrong_secret_value';
    const error = await requestClientToken({ authUrl: connect.authUrl, clientId: connect.demo.clientId, clientSecret: secret }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidClient);
    expect(error).toBeInstanceOf(ConnectError);
    expect(error).toMatchObject({ error: 'invalid_client', status: 401, description: 'client authentication failed', name: 'InvalidClient' });
    expect((error as Error).message).toBe(
      `client authentication failed (POST ${connect.authUrl}/token, HTTP 401). Check the client ID and secret for this environment (sandbox credentials do not work in production); if the secret was rotated, use the new one; if both are right, ask the operator whether the client is disabled.`,
    );
    expect((error as InvalidClient).hint).toMatch(/^Check the client ID and secret/);
    expect(String(error)).not.toContain(secret);
    expect(JSON.stringify(error)).not.toContain(secret);
    expect(isConnectError(error) && error.error === 'invalid_client').toBe(true);
  });

  it('raises invalid_response when the answer is not a token response', async () => {
    const error = await requestClientToken({ authUrl: `${connect.authUrl}/healthz-not-here`, clientId: 'a', clientSecret: 'b' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidResponse);
    expect(error).toMatchObject({ error: 'invalid_response', status: 404 });
  });

  it('refuses options that cannot work before sending anything', async () => {
    const { clientId, clientSecret } = connect.demo;
    await expect(requestClientToken({ authUrl: 'auth.example', clientId, clientSecret })).rejects.toThrow(TypeError);
    await expect(requestClientToken({ authUrl: connect.authUrl, clientId, clientSecret: '' })).rejects.toThrow('clientSecret is required');
    await expect(requestClientToken({ authUrl: connect.authUrl, clientId, clientSecret, timeoutMs: 0 })).rejects.toThrow(/timeoutMs/);
  });
});
