import { registerClient, rotateClientSecret, setClientStatus, updateClientSettings } from '../../core/clients/manage-clients.js';
import type { Client } from '../../core/clients/client.js';
import type { Runtime } from '../../runtime.js';
import { NotFound } from '../../storage/errors.js';
import { clientView, table, UsageError, type CommandResult } from '../output.js';

/** Options of the `clients` subcommands, as parsed. */
export interface ClientsOptions {
  readonly name?: string | undefined;
  readonly 'redirect-uri'?: string | undefined;
  readonly grants?: string | undefined;
  readonly 'require-pkce'?: boolean | undefined;
  readonly 'no-require-pkce'?: boolean | undefined;
}

function adminDeps(runtime: Runtime) {
  return { clients: runtime.storage.clients, hasher: runtime.hasher, clock: runtime.clock, environment: runtime.config.environment };
}

function splitGrants(value: string | undefined): string[] | undefined {
  return value === undefined ? undefined : value.split(',');
}

async function findOrFail(runtime: Runtime, id: string | undefined): Promise<Client> {
  if (!id) throw new UsageError('a client ID is required');
  const client = await runtime.storage.clients.findClient(id);
  if (!client) throw new NotFound(`no client ${id} in the ${runtime.config.environment} environment`);
  return client;
}

/** `clients create`: registers a client and shows its secret, once. */
export async function createClient(runtime: Runtime, options: ClientsOptions): Promise<CommandResult> {
  if (!options.name) throw new UsageError('--name is required');
  if (!options['redirect-uri']) throw new UsageError('--redirect-uri is required');
  const { client, clientSecret } = await registerClient(
    {
      name: options.name,
      redirectUri: options['redirect-uri'],
      grants: splitGrants(options.grants),
      requirePkce: options['require-pkce'] ?? false,
    },
    adminDeps(runtime),
  );
  const environment = runtime.config.environment;
  return {
    json: { clientId: client.id, clientSecret, name: client.name, redirectUri: client.redirectUri, grants: client.grants, environment },
    text:
      table([
        ['client ID', client.id],
        ['client secret', clientSecret],
        ['name', client.name],
        ['redirect URI', client.redirectUri],
        ['grants', client.grants.join(', ')],
        ['require PKCE', client.requirePkce ? 'yes' : 'no'],
        ['environment', environment],
      ]) + '\nThe secret is shown only now. Store it safely.\n',
  };
}

/** `clients list`. */
export async function listClients(runtime: Runtime): Promise<CommandResult> {
  const clients = (await runtime.storage.clients.listClients()).map((c) => clientView(c, runtime.config.environment));
  const text =
    clients.length === 0
      ? `no clients in the ${runtime.config.environment} environment\n`
      : clients.map((c) => `${c.clientId}  ${c.status.padEnd(8)}  ${c.name}  ${c.redirectUri}  [${c.grants.join(',')}]`).join('\n') + '\n';
  return { json: clients, text };
}

/** `clients show ID`. */
export async function showClient(runtime: Runtime, id: string | undefined): Promise<CommandResult> {
  return describe(runtime, await findOrFail(runtime, id));
}

/** `clients update ID [--redirect-uri URL] [--grants G,…] [--require-pkce | --no-require-pkce]`. */
export async function updateClient(runtime: Runtime, id: string | undefined, options: ClientsOptions): Promise<CommandResult> {
  await findOrFail(runtime, id);
  if (options['require-pkce'] && options['no-require-pkce']) throw new UsageError('give --require-pkce or --no-require-pkce, not both');
  const requirePkce = options['require-pkce'] ? true : options['no-require-pkce'] ? false : undefined;
  const client = await updateClientSettings(
    id as string,
    { redirectUri: options['redirect-uri'], grants: splitGrants(options.grants), requirePkce },
    adminDeps(runtime),
  );
  return describe(runtime, client);
}

/** `clients disable ID` / `clients enable ID`. */
export async function changeClientStatus(runtime: Runtime, id: string | undefined, status: Client['status']): Promise<CommandResult> {
  await findOrFail(runtime, id);
  return describe(runtime, await setClientStatus(id as string, status, adminDeps(runtime)));
}

/** `clients rotate-secret ID`: a new secret, shown once; the old one stops working. */
export async function rotateSecret(runtime: Runtime, id: string | undefined): Promise<CommandResult> {
  await findOrFail(runtime, id);
  const { client, clientSecret } = await rotateClientSecret(id as string, adminDeps(runtime));
  return {
    json: { clientId: client.id, clientSecret },
    text: table([
      ['client ID', client.id],
      ['client secret', clientSecret],
    ]) + '\nThe previous secret no longer works. The new one is shown only now.\n',
  };
}

function describe(runtime: Runtime, client: Client): CommandResult {
  const view = clientView(client, runtime.config.environment);
  return {
    json: view,
    text: table([
      ['client ID', view.clientId],
      ['name', view.name],
      ['status', view.status],
      ['redirect URI', view.redirectUri],
      ['grants', view.grants.join(', ')],
      ['require PKCE', view.requirePkce ? 'yes' : 'no'],
      ['environment', view.environment],
      ['created', view.createdAt],
      ['updated', view.updatedAt],
    ]),
  };
}
