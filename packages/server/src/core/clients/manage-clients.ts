import { NotFound } from '../storage-errors.js';
import type { ClientPatch } from './client-store.js';
import type { Clock } from '../clock.js';
import type { Environment } from '../environment.js';
import type { Client, ClientJwks, ClientProfile, GrantType } from './client.js';
import { CLIENT_PROFILES, DEFAULT_GRANTS, GRANT_TYPES, isGrantType } from './client.js';
import { clientJwksProblem, jwksUriProblem } from './client-keys.js';
import { generateClientId, generateClientSecret, type ClientSecretHasher } from './client-secret.js';
import { redirectUriProblem } from './redirect-uri.js';
import { hasUndisplayableCharacter } from '../control-characters.js';
import { scopeListProblem, splitScope } from '../scopes.js';

/** Invalid input to a client administration command; the message is shown to the operator. */
export class ClientValidationError extends Error {
  override readonly name = 'ClientValidationError';
}

/** The store operations client administration uses. */
export interface ClientAdminStore {
  findClient(id: string): Promise<Client | undefined>;
  insertClient(client: Client): Promise<void>;
  updateClient(id: string, patch: ClientPatch, now: number): Promise<Client>;
}

/** What client administration needs. */
export interface ClientAdminDeps {
  readonly clients: ClientAdminStore;
  readonly hasher: ClientSecretHasher;
  readonly clock: Clock;
  readonly environment: Environment;
}

/** A new client and its secret, which exists in clear only here. */
export interface RegisteredClient {
  readonly client: Client;
  readonly clientSecret: string;
}

/**
 * The stored secret hash of a client that has no secret (a `fapi2` client):
 * no HMAC is ever empty, so no secret verifies against it.
 */
export const NO_SECRET_HASH = '';

/** What registering a client takes. */
export interface RegisterClientInput {
  readonly name: string;
  readonly redirectUri: string;
  readonly grants?: readonly string[] | undefined;
  readonly requirePkce?: boolean | undefined;
  /** The scopes, space-separated (`--scopes "a b"`); default none. */
  readonly scopes?: string | undefined;
  /** `standard` (the default) or `fapi2` (docs/operator-guide.md, "FAPI 2.0 clients"). */
  readonly profile?: string | undefined;
  /** Its public keys for `private_key_jwt`: a JWK Set as parsed from `--jwks FILE`. */
  readonly jwks?: unknown;
  /** Where it publishes its keys instead (`--jwks-uri URL`). */
  readonly jwksUri?: string | undefined;
}

/** A new client and its secret, which exists in clear only here; `null` for a `fapi2` client, which has none. */
export interface NewClient {
  readonly client: Client;
  readonly clientSecret: string | null;
}

/**
 * Registers a client: a fresh ID and 256-bit secret; only the keyed hash of
 * the secret is stored. A `fapi2` client gets no secret, needs keys, and
 * requires PKCE whatever `requirePkce` says.
 *
 * @throws ClientValidationError on a bad name, redirect URI, grant list,
 *   scope list, profile or keys.
 */
export async function registerClient(input: RegisterClientInput & { readonly profile?: 'standard' | undefined }, deps: ClientAdminDeps): Promise<RegisteredClient>;
export async function registerClient(input: RegisterClientInput, deps: ClientAdminDeps): Promise<NewClient>;
export async function registerClient(input: RegisterClientInput, deps: ClientAdminDeps): Promise<NewClient> {
  const profile = validateProfile(input.profile ?? 'standard');
  const keys = validateKeys(input.jwks, input.jwksUri, deps.environment);
  if (profile === 'fapi2' && !keys) throw new ClientValidationError(FAPI2_NEEDS_KEYS);
  return insertNewClient(
    {
      name: validateName(input.name),
      kind: 'consumer',
      redirectUri: validateRedirectUri(input.redirectUri, deps.environment),
      grants: validateGrants(input.grants ?? DEFAULT_GRANTS),
      requirePkce: profile === 'fapi2' || (input.requirePkce ?? false),
      scopes: validateScopes(input.scopes ?? ''),
      scopeDescriptions: {},
      profile,
      jwks: keys?.jwks ?? null,
      jwksUri: keys?.jwksUri ?? null,
    },
    deps,
  );
}

const FAPI2_NEEDS_KEYS = 'a fapi2 client authenticates only with private_key_jwt: give its public keys with --jwks FILE or --jwks-uri URL';

function validateProfile(value: string): ClientProfile {
  if (!(CLIENT_PROFILES as readonly string[]).includes(value)) throw new ClientValidationError(`--profile must be one of ${CLIENT_PROFILES.join(', ')}`);
  return value as ClientProfile;
}

/**
 * The keys given, validated (`clientJwksProblem`, `jwksUriProblem`): a JWK
 * Set or a URI, never both; `undefined` when neither is given.
 */
function validateKeys(jwks: unknown, jwksUri: string | undefined, environment: ClientAdminDeps['environment']): { jwks: ClientJwks | null; jwksUri: string | null } | undefined {
  if (jwks !== undefined && jwksUri !== undefined) throw new ClientValidationError('give --jwks or --jwks-uri, not both');
  if (jwks !== undefined) {
    const problem = clientJwksProblem(jwks);
    if (problem) throw new ClientValidationError(`--jwks: ${problem}`);
    // Only the members a public key has are kept.
    return { jwks: { keys: (jwks as { keys: Record<string, unknown>[] }).keys.map((key) => ({ ...key })) }, jwksUri: null };
  }
  if (jwksUri !== undefined) {
    const problem = jwksUriProblem(jwksUri, environment);
    if (problem) throw new ClientValidationError(`--jwks-uri: ${problem}`);
    return { jwks: null, jwksUri };
  }
  return undefined;
}

/**
 * Registers a resource server: one of the platform's APIs, which checks
 * tokens at `/introspect` (docs/resource-servers.md). It gets an ID and a
 * secret like any client, but no grant and no redirect URI, so its
 * credentials obtain no token; they hold no key material either.
 *
 * @throws ClientValidationError on a bad name.
 */
export async function registerResourceServer(input: { readonly name: string }, deps: ClientAdminDeps): Promise<RegisteredClient> {
  return insertNewClient(
    { name: validateName(input.name), kind: 'resource_server', redirectUri: null, grants: [], requirePkce: false, scopes: [], scopeDescriptions: {} },
    deps,
  );
}

/** Stores a new active client of (validated) `settings` under a fresh ID and 256-bit secret, of which only the keyed hash is kept. */
async function insertNewClient(
  settings: Pick<Client, 'name' | 'kind' | 'redirectUri' | 'grants' | 'requirePkce' | 'scopes' | 'scopeDescriptions'> & Partial<Pick<Client, 'profile' | 'jwks' | 'jwksUri'>>,
  deps: ClientAdminDeps,
): Promise<RegisteredClient & NewClient> {
  const now = deps.clock.nowSeconds();
  const clientSecret = settings.profile === 'fapi2' ? null : generateClientSecret(deps.environment);
  const client: Client = {
    profile: 'standard',
    jwks: null,
    jwksUri: null,
    ...settings,
    id: generateClientId(deps.environment),
    secretHash: clientSecret === null ? NO_SECRET_HASH : deps.hasher.hash(clientSecret),
    status: 'active',
    createdAt: now,
    updatedAt: now,
    previousSecretHash: null,
    previousSecretExpiresAt: null,
    tokensEndedAt: null,
  };
  await deps.clients.insertClient(client);
  return { client, clientSecret } as RegisteredClient & NewClient;
}

/**
 * Issues a new secret for a client. The previous secret keeps working for
 * `graceSeconds` (so the consumer can deploy the new one without downtime),
 * then stops; with 0 it stops at once. A secret from an earlier rotation
 * still in its grace period stops now.
 *
 * @throws NotFound when there is no such client.
 */
export async function rotateClientSecret(id: string, graceSeconds: number, deps: ClientAdminDeps): Promise<RegisteredClient> {
  const current = await deps.clients.findClient(id);
  if (!current) throw new NotFound(`no client ${id}`);
  if (current.profile === 'fapi2') {
    throw new ClientValidationError(
      'this is a fapi2 client: it has no secret and authenticates only with private_key_jwt; rotate its keys instead (docs/operator-guide.md, FAPI 2.0 clients)',
    );
  }
  const now = deps.clock.nowSeconds();
  const clientSecret = generateClientSecret(deps.environment);
  const client = await deps.clients.updateClient(
    id,
    {
      secretHash: deps.hasher.hash(clientSecret),
      previousSecretHash: graceSeconds > 0 ? current.secretHash : null,
      previousSecretExpiresAt: graceSeconds > 0 ? now + graceSeconds : null,
    },
    now,
  );
  return { client, clientSecret };
}

/**
 * Changes a client's redirect URI, grants, PKCE setting, scopes and/or the
 * descriptions of its scopes, validated as at registration. A resource
 * server has none of them, and keeps it that way. New scopes apply to
 * tokens issued from then on; a token session keeps no scope the client
 * has lost (docs/tokens.md, "Scopes"), and a scope removed loses its
 * description.
 *
 * @throws NotFound when there is no such client.
 */
export async function updateClientSettings(
  id: string,
  changes: {
    redirectUri?: string | undefined;
    grants?: readonly string[] | undefined;
    requirePkce?: boolean | undefined;
    /** Space-separated; `''` removes every scope. */
    scopes?: string | undefined;
    /**
     * `SCOPE=TEXT` entries (`--scope-description`, repeatable): the text
     * customers read for that scope on the consent page; an empty TEXT
     * removes the description (the pages' default is shown again). See
     * {@link applyScopeDescriptions}.
     */
    scopeDescriptions?: readonly string[] | undefined;
    /** `standard` or `fapi2`; to `fapi2`, the client's secrets are removed at once and PKCE becomes required. */
    profile?: string | undefined;
    /** A new JWK Set (as parsed from `--jwks FILE`); replaces the keys (and any `jwks_uri`). */
    jwks?: unknown;
    /** A new `jwks_uri`; replaces the keys (and any JWK Set). */
    jwksUri?: string | undefined;
  },
  deps: ClientAdminDeps,
): Promise<Client> {
  const current = await deps.clients.findClient(id);
  if (!current) throw new NotFound(`no client ${id}`);
  if (current.kind === 'resource_server') {
    throw new ClientValidationError('a resource server has no redirect URI, grants, PKCE setting or scopes: it obtains no token (register a client for that)');
  }
  const patch: ClientPatch = {};
  if (changes.redirectUri !== undefined) patch.redirectUri = validateRedirectUri(changes.redirectUri, deps.environment);
  if (changes.grants !== undefined) patch.grants = validateGrants(changes.grants);
  if (changes.requirePkce !== undefined) patch.requirePkce = changes.requirePkce;
  if (changes.scopes !== undefined) patch.scopes = validateScopes(changes.scopes);
  if (changes.scopeDescriptions !== undefined || patch.scopes !== undefined) {
    const descriptions = applyScopeDescriptions(current.scopeDescriptions, patch.scopes ?? current.scopes, changes.scopeDescriptions ?? []);
    if (changes.scopeDescriptions !== undefined || !sameDescriptions(descriptions, current.scopeDescriptions)) patch.scopeDescriptions = descriptions;
  }
  const keys = validateKeys(changes.jwks, changes.jwksUri, deps.environment);
  if (keys) {
    patch.jwks = keys.jwks;
    patch.jwksUri = keys.jwksUri;
  }
  const profile = changes.profile === undefined ? current.profile : validateProfile(changes.profile);
  if (changes.profile !== undefined && profile !== current.profile) patch.profile = profile;
  if (profile === 'fapi2') {
    if (!(keys ?? current.jwks ?? current.jwksUri)) throw new ClientValidationError(FAPI2_NEEDS_KEYS);
    if (changes.requirePkce === false) throw new ClientValidationError('a fapi2 client requires PKCE: --no-require-pkce is refused');
    if (current.profile !== 'fapi2') {
      // FAPI 2.0 Security Profile §5.3.2.1: no secret-based authentication; the secrets stop now, also one in its grace period.
      patch.requirePkce = true;
      patch.secretHash = NO_SECRET_HASH;
      patch.previousSecretHash = null;
      patch.previousSecretExpiresAt = null;
    }
  }
  if (Object.keys(patch).length === 0) {
    throw new ClientValidationError('nothing to update: give --redirect-uri, --grants, --require-pkce, --scopes, --scope-description, --profile, --jwks or --jwks-uri');
  }
  return deps.clients.updateClient(id, patch, deps.clock.nowSeconds());
}

function validateName(name: string): string {
  const trimmed = name.trim();
  if (trimmed.length === 0 || trimmed.length > 100) throw new ClientValidationError('name must be 1 to 100 characters');
  // Shown on every hosted page: nothing that could rearrange what the page says around it.
  if (hasUndisplayableCharacter(trimmed)) throw new ClientValidationError('name must not contain control characters, line separators or direction overrides');
  return trimmed;
}

/**
 * A redirect URI as it is stored: the string given, unchanged, once it
 * passes every rule of {@link redirectUriProblem}. It is matched exactly at
 * authorization time.
 *
 * @throws ClientValidationError naming the first rule it breaks.
 */
export function validateRedirectUri(value: string, environment: Environment): string {
  const problem = redirectUriProblem(value, environment);
  if (problem) throw new ClientValidationError(problem);
  return value;
}

/**
 * The scopes of a space-separated list (RFC 6749 §3.3), each once, in the
 * order given: at most 20, each at most 64 characters of printable ASCII
 * without `"` or `\`. Any whitespace separates; `''` is none.
 *
 * @throws ClientValidationError naming what is wrong.
 */
export function validateScopes(value: string): string[] {
  // Tabs and newlines separate too, as a shell would; anything else is checked as part of a scope.
  const scopes = splitScope(value.replace(/[\t\n\r]/g, ' '));
  const problem = scopeListProblem(scopes);
  if (problem) throw new ClientValidationError(`--scopes: ${problem}`);
  return scopes;
}

/** The longest description of a scope, in characters (code points): one line of the consent page on a phone. */
export const MAX_SCOPE_DESCRIPTION_LENGTH = 160;

/**
 * The descriptions of a client's scopes after `entries` (`SCOPE=TEXT`,
 * docs/operator-guide.md, "Scopes"): each sets the text customers read for
 * one of `scopes` on the consent page, or removes it when TEXT is empty;
 * a description of a scope not in `scopes` (one just removed) is dropped.
 * SCOPE is the part before an `=` that ends one of `scopes` (a scope token
 * may itself hold `=`). TEXT is trimmed, at most
 * {@link MAX_SCOPE_DESCRIPTION_LENGTH} characters, without control
 * characters (the rule of every value Connect takes, `core/control-characters.ts`),
 * line separators or direction overrides (`hasUndisplayableCharacter`).
 *
 * @throws ClientValidationError naming the entry and what is wrong (for a
 *   scope the client does not have, the scopes it has).
 */
export function applyScopeDescriptions(current: Readonly<Record<string, string>>, scopes: readonly string[], entries: readonly string[]): Record<string, string> {
  const descriptions: Record<string, string> = Object.create(null);
  for (const scope of scopes) if (Object.hasOwn(current, scope)) descriptions[scope] = current[scope] as string;
  const seen = new Set<string>();
  for (const entry of entries) {
    const shown = JSON.stringify(entry.length > 80 ? `${entry.slice(0, 80)}…` : entry);
    const splits = [...entry.matchAll(/=/g)].map((match) => match.index).filter((at) => scopes.includes(entry.slice(0, at)));
    if (!entry.includes('=')) throw new ClientValidationError(`--scope-description ${shown}: give SCOPE=TEXT`);
    if (splits.length === 0) {
      const scope = entry.slice(0, entry.indexOf('='));
      const has = scopes.length > 0 ? `its scopes are ${scopes.join(' ')}` : 'it has no scopes (give --scopes)';
      throw new ClientValidationError(`--scope-description: ${JSON.stringify(scope)} is not a scope of this client; ${has}`);
    }
    if (splits.length > 1) throw new ClientValidationError(`--scope-description ${shown}: more than one of its scopes ends at an "=" here; it cannot be told which`);
    const at = splits[0] as number;
    const scope = entry.slice(0, at);
    const text = entry.slice(at + 1).trim();
    if (seen.has(scope)) throw new ClientValidationError(`--scope-description: ${JSON.stringify(scope)} is given twice`);
    seen.add(scope);
    if (hasUndisplayableCharacter(text)) {
      throw new ClientValidationError(`--scope-description for ${JSON.stringify(scope)} must not contain control characters (tabs, line breaks, escapes), line separators or direction overrides`);
    }
    const length = Array.from(text).length;
    if (length > MAX_SCOPE_DESCRIPTION_LENGTH) {
      throw new ClientValidationError(`--scope-description for ${JSON.stringify(scope)} has ${length} characters; at most ${MAX_SCOPE_DESCRIPTION_LENGTH}`);
    }
    if (text === '') delete descriptions[scope];
    else descriptions[scope] = text;
  }
  return descriptions;
}

function sameDescriptions(a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => Object.hasOwn(b, key) && a[key] === b[key]);
}

function validateGrants(grants: readonly string[]): GrantType[] {
  const unique = [...new Set(grants.map((g) => g.trim()).filter((g) => g !== ''))];
  if (unique.length === 0) throw new ClientValidationError('at least one grant is required');
  const unknown = unique.filter((g) => !isGrantType(g));
  if (unknown.length > 0) {
    throw new ClientValidationError(`unknown grant ${unknown.join(', ')}; grants are ${GRANT_TYPES.join(', ')}`);
  }
  if (unique.includes('refresh_token') && !unique.includes('authorization_code')) {
    throw new ClientValidationError('the refresh_token grant needs authorization_code (refresh tokens come from it)');
  }
  return unique as GrantType[];
}
