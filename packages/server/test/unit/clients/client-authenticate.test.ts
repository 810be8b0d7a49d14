import { describe, expect, it } from 'vitest';
import { authenticateClient, type ClientAuthInput } from '../../../src/core/clients/client-authenticate.js';
import { ClientSecretHasher } from '../../../src/core/clients/client-secret.js';
import type { Client } from '../../../src/core/clients/client.js';
import { InvalidClient, InvalidRequest } from '../../../src/core/errors.js';
import { fixedClock } from '../../../src/core/clock.js';
import { clientRecord } from '../../helpers/client-record.js';

const hasher = new ClientSecretHasher(new Uint8Array(32).fill(7));
const SECRET = 'csk_sandbox_right';

function client(overrides: Partial<Client> = {}): Client {
  return clientRecord({ secretHash: hasher.hash(SECRET), grants: ['client_credentials'], createdAt: 0, updatedAt: 0, ...overrides });
}

const basic = (raw: string) => `Basic ${Buffer.from(raw).toString('base64')}`;

function deps(clients: Client[] = [client()]) {
  const lookups: string[] = [];
  return {
    lookups,
    deps: {
      environment: 'sandbox' as const,
      clock: fixedClock(1_800_000_000),
      secrets: hasher,
      assertions: {
        issuer: 'https://auth.example',
        usedJtis: { useJtiOnce: async () => true },
        jwksUri: { keys: async () => ({ keys: [] }), refresh: async () => undefined },
      },
      findClient: async (id: string) => {
        lookups.push(id);
        return clients.find((c) => c.id === id);
      },
    },
  };
}

describe('authenticateClient', () => {
  const ok: Array<[string, ClientAuthInput]> = [
    ['client_secret_basic', { authorization: basic(`cid_sandbox_acme:${SECRET}`) }],
    ['client_secret_basic with a matching client_id in the body', { authorization: basic(`cid_sandbox_acme:${SECRET}`), clientId: 'cid_sandbox_acme' }],
    ['client_secret_basic with form-encoded parts', { authorization: basic(`cid%5Fsandbox%5Facme:${encodeURIComponent(SECRET)}`) }],
    ['client_secret_basic, scheme in lower case', { authorization: basic(`cid_sandbox_acme:${SECRET}`).replace('Basic', 'basic') }],
    ['client_secret_post', { clientId: 'cid_sandbox_acme', clientSecret: SECRET }],
  ];
  it.each(ok)('accepts %s', async (_name, input) => {
    const { deps: d } = deps();
    await expect(authenticateClient(input, d)).resolves.toMatchObject({ id: 'cid_sandbox_acme' });
  });

  const failures: Array<[string, ClientAuthInput, Client[] | undefined, typeof InvalidClient | typeof InvalidRequest, RegExp, string?]> = [
    ['no credentials at all', {}, undefined, InvalidClient, /authentication is required/, 'none'],
    ['client_id without a secret', { clientId: 'cid_sandbox_acme' }, undefined, InvalidClient, /client_secret is required/, 'none'],
    ['client_secret without client_id', { clientSecret: SECRET }, undefined, InvalidRequest, /client_id is required/],
    ['both Basic and client_secret', { authorization: basic(`cid_sandbox_acme:${SECRET}`), clientSecret: SECRET }, undefined, InvalidRequest, /both/],
    ['Basic and another client_id', { authorization: basic(`cid_sandbox_acme:${SECRET}`), clientId: 'cid_sandbox_other' }, undefined, InvalidRequest, /does not match/],
    ['wrong secret (Basic)', { authorization: basic('cid_sandbox_acme:wrong') }, undefined, InvalidClient, /^client authentication failed$/, 'client_secret_basic'],
    ['wrong secret (post)', { clientId: 'cid_sandbox_acme', clientSecret: 'wrong' }, undefined, InvalidClient, /^client authentication failed$/, 'client_secret_post'],
    ['unknown client', { clientId: 'cid_sandbox_nobody', clientSecret: SECRET }, undefined, InvalidClient, /^client authentication failed$/],
    ['disabled client with the right secret', { clientId: 'cid_sandbox_acme', clientSecret: SECRET }, [client({ status: 'disabled' })], InvalidClient, /disabled/],
    ['Bearer scheme', { authorization: 'Bearer abc' }, undefined, InvalidClient, /malformed/, 'client_secret_basic'],
    ['Basic without credentials', { authorization: 'Basic' }, undefined, InvalidClient, /malformed/],
    ['Basic with non-base64', { authorization: 'Basic !!!' }, undefined, InvalidClient, /malformed/],
    ['Basic without a colon', { authorization: basic('nocolon') }, undefined, InvalidClient, /malformed/],
    ['Basic with an empty ID', { authorization: basic(':secret') }, undefined, InvalidClient, /malformed/],
    ['Basic with an empty secret', { authorization: basic('cid_sandbox_acme:') }, undefined, InvalidClient, /malformed/],
    ['Basic with invalid UTF-8', { authorization: `Basic ${Buffer.from([0xff, 0x3a, 0xfe]).toString('base64')}` }, undefined, InvalidClient, /malformed/],
    ['Basic with a bad percent-escape', { authorization: basic('cid%zz:secret') }, undefined, InvalidClient, /malformed/],
    ['an overlong secret', { clientId: 'cid_sandbox_acme', clientSecret: 'x'.repeat(600) }, undefined, InvalidClient, /^client authentication failed$/],
    ['production credentials on the sandbox', { clientId: 'cid_production_abc', clientSecret: 'csk_production_x' }, undefined, InvalidClient, /production credentials; this server is the sandbox/],
    ['a production secret with a sandbox ID', { clientId: 'cid_sandbox_acme', clientSecret: 'csk_production_x' }, undefined, InvalidClient, /production credentials/],
  ];
  it.each(failures)('refuses %s', async (_name, input, clients, type, description, method) => {
    const { deps: d } = deps(clients);
    const error = await authenticateClient(input, d).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(type);
    expect((error as InvalidClient).description).toMatch(description);
    if (method) expect((error as InvalidClient).attemptedMethod).toBe(method);
  });

  it('names a disabled client only after its secret verified', async () => {
    const { deps: d } = deps([client({ status: 'disabled' })]);
    await expect(authenticateClient({ clientId: 'cid_sandbox_acme', clientSecret: 'wrong' }, d)).rejects.toMatchObject({
      description: 'client authentication failed',
    });
  });

  it('does not look up foreign-environment or overlong credentials', async () => {
    const { deps: d, lookups } = deps();
    await authenticateClient({ clientId: 'cid_production_abc', clientSecret: 'x' }, d).catch(() => {});
    await authenticateClient({ clientId: 'y'.repeat(1000), clientSecret: 'x' }, d).catch(() => {});
    expect(lookups).toEqual([]);
  });
});
