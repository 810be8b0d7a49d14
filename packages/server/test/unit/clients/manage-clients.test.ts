import { describe, expect, it } from 'vitest';
import { ClientSecretHasher } from '../../../src/core/clients/client-secret.js';
import type { Client } from '../../../src/core/clients/client.js';
import {
  ClientValidationError,
  registerClient,
  rotateClientSecret,
  updateClientSettings,
} from '../../../src/core/clients/manage-clients.js';
import { fixedClock } from '../../../src/core/clock.js';
import { NotFound } from '../../../src/core/storage-errors.js';
import type { ClientPatch } from '../../../src/core/clients/client-store.js';

function memoryDeps(environment: 'sandbox' | 'production' = 'sandbox') {
  const clients = new Map<string, Client>();
  const clock = fixedClock(1000);
  return {
    clients,
    deps: {
      environment,
      clock,
      hasher: new ClientSecretHasher(new Uint8Array(32).fill(3)),
      clients: {
        findClient: async (id: string) => clients.get(id),
        insertClient: async (c: Client) => void clients.set(c.id, c),
        updateClient: async (id: string, patch: ClientPatch, now: number) => {
          const c = clients.get(id);
          if (!c) throw new NotFound(id);
          const next = { ...c, ...patch, updatedAt: now } as Client;
          clients.set(id, next);
          return next;
        },
      },
    },
  };
}

describe('client administration', () => {
  it('registers a client storing only the keyed hash of its secret', async () => {
    const { deps, clients } = memoryDeps();
    const { client, clientSecret } = await registerClient({ name: ' Acme ', redirectUri: 'https://acme.example/cb' }, deps);
    expect(client).toMatchObject({ name: 'Acme', grants: ['client_credentials', 'authorization_code'], status: 'active', requirePkce: false, createdAt: 1000 });
    const stored = clients.get(client.id);
    expect(JSON.stringify(stored)).not.toContain(clientSecret);
    expect(deps.hasher.verify(clientSecret, stored!.secretHash)).toBe(true);
  });

  it('rotates a secret: the new one verifies, the old one no longer (no grace)', async () => {
    const { deps, clients } = memoryDeps();
    const { client, clientSecret } = await registerClient({ name: 'Acme', redirectUri: 'https://acme.example/cb' }, deps);
    const rotated = await rotateClientSecret(client.id, 0, deps);
    const stored = clients.get(client.id)!;
    expect(deps.hasher.verify(rotated.clientSecret, stored.secretHash)).toBe(true);
    expect(deps.hasher.verify(clientSecret, stored.secretHash)).toBe(false);
    expect(stored.previousSecretHash).toBeNull();
    expect(stored.previousSecretExpiresAt).toBeNull();
  });

  it('keeps the previous secret for the grace period, and only the latest previous one', async () => {
    const { deps, clients } = memoryDeps();
    const { client, clientSecret: first } = await registerClient({ name: 'Acme', redirectUri: 'https://acme.example/cb' }, deps);
    const { clientSecret: second } = await rotateClientSecret(client.id, 3600, deps);
    let stored = clients.get(client.id)!;
    expect(deps.hasher.verify(first, stored.previousSecretHash!)).toBe(true);
    expect(stored.previousSecretExpiresAt).toBe(deps.clock.nowSeconds() + 3600);
    await rotateClientSecret(client.id, 3600, deps);
    stored = clients.get(client.id)!;
    expect(deps.hasher.verify(second, stored.previousSecretHash!)).toBe(true);
    expect(deps.hasher.verify(first, stored.previousSecretHash!)).toBe(false);
  });

  it.each([
    [['client_credentials', 'nope'], /unknown grant nope/],
    [[], /at least one grant/],
    [['refresh_token'], /needs authorization_code/],
  ])('refuses grants %j', async (grants, message) => {
    const { deps, clients } = memoryDeps();
    await expect(registerClient({ name: 'Acme', redirectUri: 'https://a.example/cb', grants }, deps)).rejects.toThrow(message);
    expect(clients.size).toBe(0);
  });

  it('refuses an empty or overlong name', async () => {
    const { deps } = memoryDeps();
    await expect(registerClient({ name: '  ', redirectUri: 'https://a.example/cb' }, deps)).rejects.toBeInstanceOf(ClientValidationError);
    await expect(registerClient({ name: 'x'.repeat(101), redirectUri: 'https://a.example/cb' }, deps)).rejects.toBeInstanceOf(ClientValidationError);
  });

  it.each([
    ['a C1 control (CSI)', 'Acme\u009b2J'],
    ['a line separator', 'Acme\u2028Pay'],
    ['a right-to-left override', 'Acme \u202eyaP'],
    ['a directional isolate', 'Acme \u2067Pay\u2069'],
  ])('refuses a name, shown on the consent page, with %s', async (_what, name) => {
    const { deps } = memoryDeps();
    await expect(registerClient({ name, redirectUri: 'https://a.example/cb' }, deps)).rejects.toBeInstanceOf(ClientValidationError);
  });

  it.each([
    ['a line separator', 'payments:read=See your\u2028payments'],
    ['a right-to-left override', 'payments:read=See your \u202estnemyap'],
    ['a directional embedding', 'payments:read=\u202bSee your payments\u202c'],
  ])('refuses a scope description, shown on the consent page, with %s', async (_what, entry) => {
    const { deps } = memoryDeps();
    const { client } = await registerClient({ name: 'Acme', redirectUri: 'https://a.example/cb', scopes: 'payments:read' }, deps);
    await expect(updateClientSettings(client.id, { scopeDescriptions: [entry] }, deps)).rejects.toBeInstanceOf(ClientValidationError);
  });

  it('refuses an update with nothing to change', async () => {
    const { deps } = memoryDeps();
    const { client } = await registerClient({ name: 'Acme', redirectUri: 'https://a.example/cb' }, deps);
    await expect(updateClientSettings(client.id, {}, deps)).rejects.toThrow(/nothing to update/);
  });
});
