import { registerClient, rotateClientSecret, updateClientSettings, type ClientAdminDeps } from '../core/clients/manage-clients.js';
import { randomInt } from 'node:crypto';
import { createCustomer } from '../core/customers/manage-customers.js';
import { hashPin } from '../core/customers/pin.js';
import { weakPinReason } from '../core/customers/weak-pin.js';
import type { ClientStore } from '../core/clients/client-store.js';
import type { CustomerStore } from '../core/customers/customer-store.js';

/** The name the sandbox demo client is registered under. */
export const DEMO_CLIENT_NAME = 'Connect Demo Shop';

/** Where the demo client sends customers back to (the example consumer's address). */
export const DEMO_REDIRECT_URI = 'http://127.0.0.1:4000/callback';

/** The demo customer's mobile number. */
export const DEMO_MOBILE = '+639171234567';

/** The demo client's credentials and the demo customer's login, printed at start-up. */
export interface DemoCredentials {
  readonly clientId: string;
  readonly clientSecret: string;
  readonly created: boolean;
  readonly customer: { readonly profileId: string; readonly mobile: string; readonly pin: string };
}

/**
 * Creates the sandbox demo client when missing. A secret is shown only once,
 * so when the client exists already it gets a fresh secret on every seeded
 * start instead of a stored one being printed again.
 */
export async function seedDemo(deps: ClientAdminDeps & { clients: ClientStore; customers: CustomerStore }): Promise<DemoCredentials> {
  if (deps.environment !== 'sandbox') throw new Error('demo data is for the sandbox only');
  const customer = await seedDemoCustomer(deps);
  const client = await seedDemoClient(deps);
  return { ...client, customer };
}

/**
 * The demo customer, with a fresh random PIN at every seeded start (the PIN
 * is stored only hashed, so it is printed now or never), never one a
 * customer could not choose.
 */
async function seedDemoCustomer(deps: { customers: CustomerStore; clock: ClientAdminDeps['clock'] }) {
  let pin: string;
  do pin = String(randomInt(0, 1_000_000)).padStart(6, '0');
  while (weakPinReason(pin));
  const existing = await deps.customers.findCustomerByMobile(DEMO_MOBILE);
  if (existing) {
    const now = deps.clock.nowSeconds();
    await deps.customers.updateCustomer(existing.profileId, { pinHash: await hashPin(pin), status: 'active', pinAttempts: 0, lockedUntil: null }, now);
    return { profileId: existing.profileId, mobile: DEMO_MOBILE, pin };
  }
  const { customer } = await createCustomer({ mobile: DEMO_MOBILE, pin, name: 'Demo Customer' }, deps);
  return { profileId: customer.profileId, mobile: DEMO_MOBILE, pin };
}

async function seedDemoClient(deps: ClientAdminDeps & { clients: ClientStore }): Promise<Omit<DemoCredentials, 'customer'>> {
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
  const { clientSecret } = await rotateClientSecret(existing.id, 0, deps);
  return { clientId: existing.id, clientSecret, created: false };
}
