import { registerClient, rotateClientSecret, updateClientSettings, type ClientAdminDeps } from '../core/clients/manage-clients.js';
import type { ClientStore } from '../storage/ports.js';

/** The name the sandbox demo client is registered under. */
export const DEMO_CLIENT_NAME = 'Connect Demo Shop';

/** Where the demo client sends customers back to (the example consumer's address). */
export const DEMO_REDIRECT_URI = 'http://127.0.0.1:4000/callback';

/** The demo client's credentials, printed at start-up. */
export interface DemoCredentials {
  readonly clientId: string;
  readonly clientSecret: string;
  readonly created: boolean;
}

/**
 * Creates the sandbox demo client when missing. A secret is shown only once,
 * so when the client exists already it gets a fresh secret on every seeded
 * start instead of a stored one being printed again.
 */
export async function seedDemo(deps: ClientAdminDeps & { clients: ClientStore }): Promise<DemoCredentials> {
  if (deps.environment !== 'sandbox') throw new Error('demo data is for the sandbox only');
  const existing = (await deps.clients.listClients()).find((c) => c.name === DEMO_CLIENT_NAME);
  const grants = ['client_credentials', 'authorization_code', 'refresh_token'];
  if (!existing) {
    const { client, clientSecret } = await registerClient({ name: DEMO_CLIENT_NAME, redirectUri: DEMO_REDIRECT_URI, grants }, deps);
    return { clientId: client.id, clientSecret, created: true };
  }
  if (existing.status !== 'active') {
    await deps.clients.updateClient(existing.id, { status: 'active' }, deps.clock.nowSeconds());
  }
  await updateClientSettings(existing.id, { redirectUri: DEMO_REDIRECT_URI, grants }, deps);
  const { clientSecret } = await rotateClientSecret(existing.id, deps);
  return { clientId: existing.id, clientSecret, created: false };
}
