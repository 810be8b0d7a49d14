import { createHmac } from 'node:crypto';
import { registerClient, registerResourceServer, updateClientSettings, type ClientAdminDeps } from '../core/clients/manage-clients.js';
import { clientSecretPrefix } from '../core/clients/client.js';
import { createCustomer } from '../core/customers/manage-customers.js';
import { hashPin, verifyPin } from '../core/customers/pin.js';
import { weakPinReason } from '../core/customers/weak-pin.js';
import type { ClientStore } from '../core/clients/client-store.js';
import type { CustomerStore } from '../core/customers/customer-store.js';

/** The name the sandbox demo client is registered under. */
export const DEMO_CLIENT_NAME = 'Connect Demo Shop';

/** The name the sandbox demo resource server (the example platform API) is registered under. */
export const DEMO_RESOURCE_SERVER_NAME = 'Connect Demo Platform API';

/** The path of the sandbox's callback page, where the demo client's customers come back to by default. */
export const SANDBOX_CALLBACK_PATH = '/sandbox/callback';

/** Where the example shop (`npm run demo`) takes its customers back: its own callback. */
export const DEMO_SHOP_REDIRECT_URI = 'http://127.0.0.1:4000/callback';

/** The demo customer's mobile number. */
export const DEMO_MOBILE = '+639171234567';

/** The demo client's credentials and the demo customer's login, printed at start-up. */
export interface DemoCredentials {
  readonly clientId: string;
  readonly clientSecret: string;
  readonly redirectUri: string;
  readonly created: boolean;
  readonly customer: { readonly profileId: string; readonly mobile: string; readonly pin: string };
  /** A resource server for the example platform API: it checks customer tokens at `/introspect` and obtains none. */
  readonly resourceServer: { readonly clientId: string; readonly clientSecret: string };
}

/** What seeding the demo needs. */
export interface SeedDemoDeps extends ClientAdminDeps {
  readonly clients: ClientStore;
  readonly customers: CustomerStore;
  /** `Runtime.demoKey`: the demo's secret and PIN are derived from it. */
  readonly demoKey: Uint8Array;
}

/**
 * Creates the sandbox demo client and customer when missing, or brings them
 * back to what they were (docs/operator-guide.md, "One server, one
 * environment"): the client's ID, its secret and the customer's PIN stay the
 * same for as long as the data folder (its master key) does, so a
 * consumer's saved sandbox configuration keeps working across restarts.
 * The secret and PIN are derived from the master key, not stored in clear.
 * The client's redirect URI becomes `redirectUri` (the sandbox's callback
 * page, or the example shop's). A demo resource server (the example
 * platform API's credentials) is kept the same way.
 */
export async function seedDemo(redirectUri: string, deps: SeedDemoDeps): Promise<DemoCredentials> {
  if (deps.environment !== 'sandbox') throw new Error('demo data is for the sandbox only');
  const customer = await seedDemoCustomer(deps);
  const client = await seedDemoClient(redirectUri, deps);
  const resourceServer = await seedDemoResourceServer(deps);
  return { ...client, redirectUri, customer, resourceServer };
}

/** The demo's value named `purpose`, derived from the demo key. */
function derived(deps: Pick<SeedDemoDeps, 'demoKey'>, purpose: string): Buffer {
  return createHmac('sha256', deps.demoKey).update(purpose).digest();
}

/** The demo customer's PIN: 6 digits derived from the demo key, the first of them that is not a weak PIN. */
export function demoPin(deps: Pick<SeedDemoDeps, 'demoKey'>): string {
  for (let attempt = 0; ; attempt++) {
    const pin = String(derived(deps, `customer-pin-${attempt}`).readUInt32BE(0) % 1_000_000).padStart(6, '0');
    if (weakPinReason(pin) === undefined) return pin;
  }
}

/** The demo client's secret: shaped like every sandbox secret, derived from the demo key. */
export function demoClientSecret(deps: Pick<SeedDemoDeps, 'demoKey'>): string {
  return clientSecretPrefix('sandbox') + derived(deps, 'client-secret').toString('base64url');
}

/** The demo resource server's secret, derived the same way. */
function demoResourceServerSecret(deps: Pick<SeedDemoDeps, 'demoKey'>): string {
  return clientSecretPrefix('sandbox') + derived(deps, 'resource-server-secret').toString('base64url');
}

async function seedDemoCustomer(deps: SeedDemoDeps) {
  const pin = demoPin(deps);
  const existing = await deps.customers.findCustomerByMobile(DEMO_MOBILE);
  if (existing) {
    const now = deps.clock.nowSeconds();
    const pinHash = (await verifyPin(pin, existing.pinHash)) ? existing.pinHash : await hashPin(pin);
    await deps.customers.updateCustomer(existing.profileId, { pinHash, status: 'active', pinAttempts: 0, lockedUntil: null }, now);
    return { profileId: existing.profileId, mobile: DEMO_MOBILE, pin };
  }
  const { customer } = await createCustomer({ mobile: DEMO_MOBILE, pin, name: 'Demo Customer' }, deps);
  return { profileId: customer.profileId, mobile: DEMO_MOBILE, pin };
}

async function seedDemoClient(redirectUri: string, deps: SeedDemoDeps): Promise<Omit<DemoCredentials, 'customer' | 'redirectUri' | 'resourceServer'>> {
  const clientSecret = demoClientSecret(deps);
  const now = deps.clock.nowSeconds();
  const grants = ['client_credentials', 'authorization_code', 'refresh_token'];
  const existing = (await deps.clients.listClients()).find((c) => c.name === DEMO_CLIENT_NAME && c.kind === 'consumer');
  if (!existing) {
    const { client } = await registerClient({ name: DEMO_CLIENT_NAME, redirectUri, grants }, deps);
    await deps.clients.updateClient(client.id, { secretHash: deps.hasher.hash(clientSecret) }, now);
    return { clientId: client.id, clientSecret, created: true };
  }
  if (existing.status !== 'active') await deps.clients.updateClient(existing.id, { status: 'active' }, now);
  if (existing.redirectUri !== redirectUri || grants.some((grant) => !existing.grants.includes(grant as never))) {
    await updateClientSettings(existing.id, { redirectUri, grants }, deps);
  }
  if (!deps.hasher.verify(clientSecret, existing.secretHash) || existing.previousSecretHash !== null) {
    await deps.clients.updateClient(existing.id, { secretHash: deps.hasher.hash(clientSecret), previousSecretHash: null, previousSecretExpiresAt: null }, now);
  }
  return { clientId: existing.id, clientSecret, created: false };
}

/** The demo resource server, created when missing; its secret kept as the demo client's is. */
async function seedDemoResourceServer(deps: SeedDemoDeps): Promise<DemoCredentials['resourceServer']> {
  const clientSecret = demoResourceServerSecret(deps);
  const now = deps.clock.nowSeconds();
  const existing = (await deps.clients.listClients()).find((c) => c.name === DEMO_RESOURCE_SERVER_NAME && c.kind === 'resource_server');
  const id = existing?.id ?? (await registerResourceServer({ name: DEMO_RESOURCE_SERVER_NAME }, deps)).client.id;
  if (existing && existing.status !== 'active') await deps.clients.updateClient(id, { status: 'active' }, now);
  if (!existing || !deps.hasher.verify(clientSecret, existing.secretHash) || existing.previousSecretHash !== null) {
    await deps.clients.updateClient(id, { secretHash: deps.hasher.hash(clientSecret), previousSecretHash: null, previousSecretExpiresAt: null }, now);
  }
  return { clientId: id, clientSecret };
}
