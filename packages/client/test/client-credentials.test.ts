import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, type RunningServer } from '@connect-auth/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConnectError, requestClientToken } from '../src/index.js';

// The SDK against a real Connect server on an ephemeral port.
let server: RunningServer;
let dataDir: string;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'connect-sdk-'));
  server = await startServer({
    env: { PORT: '0', CONNECT_DATA_DIR: dataDir, CONNECT_LOG_LEVEL: 'silent' },
    seedDemo: true,
    print: () => {},
  });
});

afterAll(async () => {
  await server?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('requestClientToken', () => {
  it('gets a client-credentials token from Connect', async () => {
    const { clientId, clientSecret } = server.demo!;
    const token = await requestClientToken({ authUrl: server.urls.authUrl, clientId, clientSecret });
    expect(token.tokenType).toBe('Bearer');
    expect(token.expiresIn).toBe(3600);
    expect(token.accessToken.split('.')).toHaveLength(3);
  });

  it('raises invalid_client as a typed error for a wrong secret', async () => {
    const error = await requestClientToken({
      authUrl: server.urls.authUrl,
      clientId: server.demo!.clientId,
      clientSecret: 'csk_sandbox_wrong',
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectError);
    expect(error).toMatchObject({ error: 'invalid_client', status: 401, description: 'client authentication failed' });
  });

  it('raises invalid_response when the answer is not a token response', async () => {
    const error = await requestClientToken({
      authUrl: `${server.urls.authUrl}/healthz-not-here`,
      clientId: 'a',
      clientSecret: 'b',
    }).catch((e: unknown) => e);
    expect(error).toMatchObject({ error: 'invalid_response', status: 404 });
  });
});
