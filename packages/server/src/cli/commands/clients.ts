import type { ClientCommandDeps } from '../../compose/command-deps.js';
import { readFile, stat } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { registerClient, registerResourceServer, rotateClientSecret, updateClientSettings } from '../../core/clients/manage-clients.js';
import { CLIENT_STATUS_WAIT_MS } from '../../core/lifetimes.js';
import { disableClient, enableClient, type ClientStatusOutcome } from '../../core/operator/client-status.js';
import type { Client } from '../../core/clients/client.js';
import type { Stores } from '../../core/storage/storage.js';
import { NotFound } from '../../core/storage-errors.js';
import { clockDate } from '../../core/clock.js';
import {
  checkRecipient,
  removeCredentialsFile,
  writeCredentialsFile,
  type CheckedRecipient,
  type CredentialsFileContent,
  type DeliveryTarget,
} from '../../delivery/credentials-file.js';
import { recordAdminAction } from './audit-actor.js';
import { clientView, isoTime, printable, table, UsageError, type CommandResult } from './output.js';

/** Options of the `clients` subcommands, as parsed (`--redirect-uri` is `redirectUri`). */
export interface ClientsOptions {
  readonly name?: string | undefined;
  readonly redirectUri?: string | undefined;
  readonly grants?: string | undefined;
  /** `--require-pkce`: true; `--no-require-pkce` (update): false; neither: unchanged. */
  readonly requirePkce?: boolean | undefined;
  readonly resourceServer?: boolean | undefined;
  readonly recipientEmail?: string | undefined;
  readonly recipientKey?: string | undefined;
  readonly scopes?: string | undefined;
  /** `--scope-description SCOPE=TEXT`, each time it was given. */
  readonly scopeDescription?: readonly string[] | undefined;
  readonly out?: string | undefined;
  readonly grace?: string | undefined;
  /** `--profile standard|fapi2`. */
  readonly profile?: string | undefined;
  /** `--jwks FILE`: the path of a JWK Set of the client's public keys. */
  readonly jwks?: string | undefined;
  /** `--jwks-uri URL`. */
  readonly jwksUri?: string | undefined;
}

/** The command-line spelling of each option that a resource server does not take. */
const CONSUMER_ONLY = {
  redirectUri: '--redirect-uri',
  grants: '--grants',
  requirePkce: '--require-pkce',
  scopes: '--scopes',
  profile: '--profile',
  jwks: '--jwks',
  jwksUri: '--jwks-uri',
} as const;

/** The JWK Set in `--jwks FILE`, parsed (core validates what it holds); `undefined` without the option. */
async function readJwksFile(path: string | undefined): Promise<unknown> {
  if (path === undefined) return undefined;
  let text: string;
  try {
    const file = await stat(path);
    if (!file.isFile()) throw new UsageError(`--jwks ${path}: not a file`);
    if (file.size > 256 * 1024) throw new UsageError(`--jwks ${path}: larger than 256 KiB; a JWK Set of public keys is far smaller`);
    text = await readFile(path, 'utf8');
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError(`--jwks ${path}: cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new UsageError(`--jwks ${path}: not JSON; give a JWK Set, {"keys":[...]}`);
  }
}

function splitGrants(value: string | undefined): string[] | undefined {
  return value === undefined ? undefined : value.split(',');
}

async function findOrFail(deps: ClientCommandDeps, id: string | undefined): Promise<Client> {
  if (!id) throw new UsageError('a client ID is required');
  const client = await deps.clients.findClient(id);
  if (!client) throw new NotFound(`no client ${id} in the ${deps.environment} environment`);
  return client;
}

/**
 * Runs a change that makes a client secret in one transaction, and writes
 * the credentials file (when there is a recipient) inside it: a file that
 * cannot be written leaves nothing changed. If the transaction then fails to
 * commit, the file is removed again, since the secret in it does not exist.
 */
async function changeDelivering<T extends { client: Client; clientSecret: string | null }>(
  deps: ClientCommandDeps,
  recipient: CheckedRecipient | undefined,
  change: (tx: Stores) => Promise<T>,
): Promise<T> {
  let written = false;
  try {
    return await deps.transaction(async (tx) => {
      const result = await change(tx);
      if (recipient && result.clientSecret !== null) {
        await writeCredentialsFile(recipient, fileContent(deps, result.client, result.clientSecret), clockDate(deps.clock));
        written = true;
      }
      return result;
    });
  } catch (error) {
    if (written && recipient) return removeCredentialsFile(recipient, error);
    throw error;
  }
}

/** `clients create`: registers a client and shows its secret once, or delivers it encrypted. */
export async function createClient(deps: ClientCommandDeps, options: ClientsOptions): Promise<CommandResult> {
  if (!options.name) throw new UsageError('--name is required');
  const resourceServer = options.resourceServer ?? false;
  if (resourceServer) {
    const given = (Object.keys(CONSUMER_ONLY) as Array<keyof typeof CONSUMER_ONLY>).filter((name) => options[name] !== undefined);
    if (given.length > 0) {
      throw new UsageError(`--resource-server takes no ${given.map((name) => CONSUMER_ONLY[name]).join(', ')}: a resource server obtains no token`);
    }
  } else if (!options.redirectUri) {
    throw new UsageError('--redirect-uri is required (or --resource-server for an API that only checks tokens)');
  }
  const delivery = deliveryTarget(options);
  if (delivery && options.profile === 'fapi2') throw new UsageError('a fapi2 client has no secret to deliver: leave out --recipient-email, --recipient-key and --out');
  const jwks = await readJwksFile(options.jwks);
  // Every check of the delivery happens before a secret exists.
  const recipient = delivery ? await checkRecipient(delivery, clockDate(deps.clock)) : undefined;
  const environment = deps.environment;
  const { client, clientSecret } = await changeDelivering(deps, recipient, async (tx) => {
    const inTx = { ...deps, clients: tx.clients };
    const registered = resourceServer
      ? await registerResourceServer({ name: options.name as string }, inTx)
      : await registerClient(
          {
            name: options.name as string,
            redirectUri: options.redirectUri as string,
            grants: splitGrants(options.grants),
            requirePkce: options.requirePkce ?? false,
            scopes: options.scopes,
            profile: options.profile,
            jwks,
            jwksUri: options.jwksUri,
          } as Parameters<typeof registerClient>[0],
          inTx,
        );
    await recordAdminAction(
      deps,
      {
        type: 'client.created',
        subject: registered.client.id,
        details: {
          name: registered.client.name,
          delivered_to: recipient?.email ?? null,
          ...kindField(registered.client),
          ...(registered.client.scopes.length > 0 ? { scopes: registered.client.scopes.join(' ') } : {}),
          ...profileAudit(registered.client),
        },
      },
      tx,
    );
    return registered;
  });
  // A consumer's answer has exactly the documented fields, and its scopes when it has some; a resource server's says what it is.
  const summary = { clientId: client.id, name: client.name, ...kindField(client), redirectUri: client.redirectUri, grants: client.grants, ...scopesField(client), ...profileField(client), environment };
  const rows = (secret: string | undefined): Array<readonly [string, string]> => [
    ['client ID', client.id],
    ...(secret === undefined ? [] : [['client secret', secret] as const]),
    ['name', client.name],
    ...(client.kind === 'resource_server'
      ? [['kind', 'resource server: checks tokens at /introspect, obtains none'] as const]
      : [
          ['redirect URI', client.redirectUri ?? '-'] as const,
          ['grants', client.grants.join(', ')] as const,
          ['require PKCE', client.requirePkce ? 'yes' : 'no'] as const,
          ['scopes', scopesText(client.scopes)] as const,
          ['profile', client.profile] as const,
          ['keys', keysText(client)] as const,
        ]),
    ['environment', environment],
  ];
  if (recipient) {
    return {
      json: { ...summary, delivery: deliveryView(recipient) },
      text: table(rows(undefined)) + `\nThe credentials are encrypted to ${recipient.email} (key ${recipient.fingerprint}) in ${recipient.outPath}.\n`,
    };
  }
  const { clientId, ...rest } = summary;
  if (clientSecret === null) {
    return {
      json: { clientId, ...rest },
      text: table(rows(undefined)) + '\nA fapi2 client has no secret: it authenticates only with private_key_jwt, with the keys above.\n',
    };
  }
  return {
    json: { clientId, clientSecret, ...rest },
    text: table(rows(clientSecret)) + '\nThe secret is shown only now. Store it safely.\n',
  };
}

/** `{ kind: 'resource_server' }` for a resource server, nothing for a consumer (whose outputs keep their documented fields). */
function kindField(client: Client): { kind?: 'resource_server' } {
  return client.kind === 'resource_server' ? { kind: 'resource_server' } : {};
}

/** `{ scopes }` for a client that has scopes, nothing otherwise (the documented fields of `clients create` stay as they are). */
function scopesField(client: Client): { scopes?: string[] } {
  return client.scopes.length > 0 ? { scopes: [...client.scopes] } : {};
}

/** `{ profile, keys }` for a client of the `fapi2` profile or with keys, nothing otherwise (the documented fields of `clients create` stay as they are). */
function profileField(client: Client): { profile?: Client['profile']; keys?: ReturnType<typeof clientView>['keys'] } {
  return client.profile !== 'standard' || client.jwks || client.jwksUri ? { profile: client.profile, keys: clientView(client, 'sandbox').keys } : {};
}

/**
 * The profile and key source, for the audit log (never a key itself: the
 * kids at most); nothing for a `standard` client without keys, whose events
 * stay as they were, unless `always`.
 */
function profileAudit(client: Client, always = false): Record<string, string> {
  if (!always && client.profile === 'standard' && !client.jwks && !client.jwksUri) return {};
  return {
    profile: client.profile,
    keys: client.jwksUri ? `jwks_uri ${client.jwksUri}` : client.jwks ? `jwks ${client.jwks.keys.map((key) => (typeof key.kid === 'string' ? key.kid : '-')).join(' ')}` : 'none',
  };
}

/** Where a client's keys come from, for people. */
function keysText(client: Client): string {
  if (client.jwksUri) return `fetched from ${client.jwksUri}`;
  if (client.jwks) {
    const kids = client.jwks.keys.map((key) => (typeof key.kid === 'string' ? key.kid : '(no kid)'));
    return `${kids.length} registered (${kids.join(', ')})`;
  }
  return '-';
}

/** Scopes for people: space-separated, as `--scopes` takes them, or `-` for none. */
function scopesText(scopes: readonly string[]): string {
  return scopes.length > 0 ? scopes.join(' ') : '-';
}

/** `clients list`. */
export async function listClients(deps: ClientCommandDeps): Promise<CommandResult> {
  const clients = (await deps.clients.listClients()).map((c) => clientView(c, deps.environment));
  const text =
    clients.length === 0
      ? `no clients in the ${deps.environment} environment\n`
      : clients
          .map((c) => printable(`${c.clientId}  ${c.status.padEnd(8)}  ${c.name}  ${c.kind === 'resource_server' ? '(resource server)' : `${c.redirectUri}  [${c.grants.join(',')}]${c.scopes.length > 0 ? `  scopes: ${c.scopes.join(' ')}` : ''}  profile: ${c.profile}${c.keys ? `  keys: ${c.keys.source}` : ''}`}`))
          .join('\n') + '\n';
  return { json: clients, text };
}

/** `clients show ID`. */
export async function showClient(deps: ClientCommandDeps, id: string | undefined): Promise<CommandResult> {
  return describe(deps, await findOrFail(deps, id));
}

/** `clients update ID [--redirect-uri URL] [--grants G,…] [--require-pkce | --no-require-pkce] [--scopes "A B"] [--scope-description SCOPE=TEXT …]`. */
export async function updateClient(deps: ClientCommandDeps, id: string | undefined, options: ClientsOptions): Promise<CommandResult> {
  const before = await findOrFail(deps, id);
  const changes = {
    redirectUri: options.redirectUri,
    grants: splitGrants(options.grants),
    requirePkce: options.requirePkce,
    scopes: options.scopes,
    scopeDescriptions: options.scopeDescription,
    profile: options.profile,
    jwks: await readJwksFile(options.jwks),
    jwksUri: options.jwksUri,
  };
  const client = await deps.transaction(async (tx) => {
    const updated = await updateClientSettings(id as string, changes, { ...deps, clients: tx.clients });
    await recordAdminAction(
      deps,
      {
        type: 'client.updated',
        subject: updated.id,
        details: {
          redirect_uri: updated.redirectUri ?? '',
          grants: updated.grants.join(' '),
          require_pkce: updated.requirePkce,
          scopes: updated.scopes.join(' '),
          ...(options.scopeDescription ? { scope_descriptions_set: Object.keys(updated.scopeDescriptions).join(' ') } : {}),
          ...profileAudit(updated, before.profile !== updated.profile),
          ...(before.profile !== 'fapi2' && updated.profile === 'fapi2' ? { secrets_removed: true } : {}),
        },
      },
      tx,
    );
    return updated;
  });
  const described = describe(deps, client);
  if (before.profile !== 'fapi2' && client.profile === 'fapi2') {
    return { ...described, text: described.text + '\nNow a fapi2 client: its secret (and any previous one) no longer works; it authenticates only with private_key_jwt.\n' };
  }
  if (before.profile === 'fapi2' && client.profile === 'standard') {
    return { ...described, text: described.text + '\nNow a standard client. It has no secret: give it one with clients rotate-secret if it needs one.\n' };
  }
  return described;
}

/**
 * `clients disable ID` / `clients enable ID` (docs/operator-guide.md,
 * "Disabling a client"). Disabling ends, in one transaction, every token
 * the client holds: its client access tokens (by `tokensEndedAt`), the
 * token sessions of its customers and its unredeemed codes; enabling
 * revives none of them. An enable in the very second of the disable waits
 * for the clock's next second, so that no token issued after it is ended by
 * the disable. A client that already has the status: a no-op that says so.
 */
export async function changeClientStatus(deps: ClientCommandDeps, id: string | undefined, status: Client['status']): Promise<CommandResult> {
  await findOrFail(deps, id);
  const change = status === 'disabled' ? disableClient : enableClient;
  const started = performance.now();
  for (;;) {
    const now = deps.clock.nowSeconds();
    const outcome: ClientStatusOutcome = await deps.transaction(async (tx) => {
      const result = await change(id as string, tx, now);
      if (result.kind === 'changed') {
        await recordAdminAction(
          deps,
          {
            type: status === 'disabled' ? 'client.disabled' : 'client.enabled',
            subject: result.client.id,
            details: { token_sessions_revoked: result.ended.tokenSessions, codes_ended: result.ended.codes, tokens_ended_at: result.client.tokensEndedAt },
          },
          tx,
        );
      }
      return result;
    });
    if (outcome.kind !== 'not-yet') return statusResult(deps, outcome, status);
    while (deps.clock.nowSeconds() < outcome.notBefore) {
      if (performance.now() - started > CLIENT_STATUS_WAIT_MS) {
        throw new Error(`the clock has not reached ${isoTime(outcome.notBefore)}, when the client's tokens can be ended exactly; nothing changed, try again`);
      }
      await sleep(20);
    }
  }
}

function statusResult(deps: ClientCommandDeps, outcome: Exclude<ClientStatusOutcome, { kind: 'not-yet' }>, status: Client['status']): CommandResult {
  const described = describe(deps, outcome.client);
  const word = status === 'disabled' ? 'disabled' : 'enabled';
  if (outcome.kind === 'unchanged') {
    return {
      json: { ...(described.json as object), changed: false, ended: { tokenSessions: 0, codes: 0 } },
      text: described.text + `\nThe client was already ${word}: nothing changed.\n`,
    };
  }
  const { ended } = outcome;
  const what =
    `revoked ${plural(ended.tokenSessions, 'token session')} of its customers (their refresh and access tokens) and ` +
    `ended ${plural(ended.codes, 'unredeemed authorization code')}`;
  const text =
    status === 'disabled'
      ? `\nDisabled. Its client access tokens issued at or before ${isoTime(outcome.client.tokensEndedAt ?? 0)} are refused from now on, also after an enable; ${what}.\n`
      : `\nEnabled. Nothing the disable ended comes back${ended.tokenSessions + ended.codes > 0 ? `; ${what}` : ''}.\n`;
  return { json: { ...(described.json as object), changed: true, ended }, text: described.text + text };
}

function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

/**
 * `clients rotate-secret ID [--grace SECONDS]`: a new secret, shown once or
 * delivered encrypted; the old one keeps working for the grace period.
 */
export async function rotateSecret(deps: ClientCommandDeps, id: string | undefined, options: ClientsOptions): Promise<CommandResult> {
  const existing = await findOrFail(deps, id);
  const grace = graceSeconds(deps, options.grace);
  const delivery = deliveryTarget(options);
  const recipient = delivery ? await checkRecipient(delivery, clockDate(deps.clock)) : undefined;
  const { client, clientSecret } = await changeDelivering(deps, recipient, async (tx) => {
    const rotated = await rotateClientSecret(existing.id, grace, { ...deps, clients: tx.clients });
    await recordAdminAction(
      deps,
      { type: 'client.secret_rotated', subject: existing.id, details: { grace_seconds: grace, delivered_to: recipient?.email ?? null } },
      tx,
    );
    return rotated;
  });
  const until = client.previousSecretExpiresAt;
  const previous = until === null ? 'The previous secret no longer works.' : `The previous secret keeps working until ${isoTime(until)}.`;
  if (recipient) {
    return {
      json: { clientId: client.id, delivery: deliveryView(recipient), previousSecretValidUntil: until === null ? null : isoTime(until) },
      text: `New secret for ${client.id} encrypted to ${recipient.email} (key ${recipient.fingerprint}) in ${recipient.outPath}.\n${previous}\n`,
    };
  }
  return {
    json: { clientId: client.id, clientSecret },
    text:
      table([
        ['client ID', client.id],
        ['client secret', clientSecret],
      ]) + `\n${previous} The new one is shown only now.\n`,
  };
}

function graceSeconds(deps: ClientCommandDeps, value: string | undefined): number {
  if (value === undefined) return deps.secretRotationGraceSeconds;
  if (!/^\d+$/.test(value) || Number(value) > 30 * 86_400) throw new UsageError('--grace must be a whole number of seconds from 0 to 2592000');
  return Number(value);
}

function deliveryTarget(options: ClientsOptions): DeliveryTarget | undefined {
  const given = [options.recipientEmail, options.recipientKey, options.out].filter((v) => v !== undefined).length;
  if (given === 0) return undefined;
  if (given !== 3) throw new UsageError('--recipient-email, --recipient-key and --out go together');
  return { recipientEmail: options.recipientEmail as string, recipientKeyPath: options.recipientKey as string, outPath: options.out as string };
}

function deliveryView(recipient: CheckedRecipient) {
  return { recipientEmail: recipient.email, keyFingerprint: recipient.fingerprint, file: recipient.outPath };
}

function fileContent(deps: ClientCommandDeps, client: Client, clientSecret: string): CredentialsFileContent {
  return {
    clientId: client.id,
    clientSecret,
    name: client.name,
    environment: deps.environment,
    authUrl: deps.authUrl,
    baseUrl: deps.baseUrl,
    redirectUri: client.redirectUri,
    ...kindField(client),
    ...scopesField(client),
    issuedAt: isoTime(deps.clock.nowSeconds()),
  };
}

function describe(deps: ClientCommandDeps, client: Client): CommandResult {
  const view = clientView(client, deps.environment);
  return {
    json: view,
    text: table([
      ['client ID', view.clientId],
      ['name', view.name],
      ['status', view.status],
      ['kind', view.kind === 'resource_server' ? 'resource server' : 'consumer'],
      ['redirect URI', view.redirectUri ?? '-'],
      ['grants', view.grants.join(', ')],
      ['require PKCE', view.requirePkce ? 'yes' : 'no'],
      ['scopes', scopesText(view.scopes)],
      // What each scope says to customers, under the scopes.
      ...Object.entries(view.scopeDescriptions).map(([scope, text]) => [`  ${scope}`, text] as const),
      ['profile', view.profile],
      ['keys', keysText(client)],
      ['environment', view.environment],
      ['created', view.createdAt],
      ['updated', view.updatedAt],
      ['tokens ended', view.tokensEndedAt ?? '-'],
    ]),
  };
}
