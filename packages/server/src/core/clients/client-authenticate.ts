import { isUtf8 } from 'node:buffer';
import type { Clock } from '../clock.js';
import type { Environment } from '../environment.js';
import { hasControlCharacter } from '../control-characters.js';
import { ENVIRONMENTS } from '../environment.js';
import { InvalidClient, InvalidRequest, type ClientAuthMethod } from '../errors.js';
import { clientIdPrefix, clientSecretPrefix, type Client } from './client.js';
import { decodeJwt } from 'jose';
import { JWT_BEARER_ASSERTION_TYPE, verifyClientAssertion, type ClientAssertionDeps } from './client-assertion.js';
import type { ClientSecretVerifier } from './verified-secrets.js';

/** The credentials a request carried, as received. */
export interface ClientAuthInput {
  /** The raw `Authorization` header, if any. */
  readonly authorization?: string | undefined;
  /** `client_id` from the form body, if any. */
  readonly clientId?: string | undefined;
  /** `client_secret` from the form body, if any. */
  readonly clientSecret?: string | undefined;
  /** `client_assertion_type` from the form body, if any (RFC 7521 §4.2). */
  readonly clientAssertionType?: string | undefined;
  /** `client_assertion` from the form body, if any: a `private_key_jwt` assertion (RFC 7523 §2.2). Never logged. */
  readonly clientAssertion?: string | undefined;
  /** The caller's address, for the audit log of failed attempts. */
  readonly ip?: string | undefined;
  /** The ID of the request this is part of (its `X-Request-Id`), recorded with the audit events it causes. */
  readonly correlationId?: string | undefined;
}

/**
 * The credentials of a form-encoded request (RFC 6749 §2.3.1, RFC 7521
 * §4.2): what every client-authenticated endpoint (`/token`, `/introspect`,
 * `/revoke`, `/par`) hands {@link authenticateClient}.
 */
export function clientAuthInputOf(
  params: Readonly<Record<string, string | undefined>>,
  request: { readonly authorization?: string | undefined; readonly ip?: string | undefined; readonly correlationId?: string | undefined },
): ClientAuthInput {
  return {
    authorization: request.authorization,
    clientId: params.client_id,
    clientSecret: params.client_secret,
    clientAssertionType: params.client_assertion_type,
    clientAssertion: params.client_assertion,
    ip: request.ip,
    correlationId: request.correlationId,
  };
}

/** What client authentication reads. */
export interface ClientAuthDeps {
  findClient(id: string): Promise<Client | undefined>;
  /** A `ClientSecretHasher`, or one that remembers verified secrets (`rememberVerifiedSecrets`). */
  readonly secrets: ClientSecretVerifier;
  readonly environment: Environment;
  readonly clock: Clock;
  /** What `private_key_jwt` needs: the issuer, the replay store, the `jwks_uri` fetcher. */
  readonly assertions: Omit<ClientAssertionDeps, 'clock'>;
  /**
   * Re-hashes a secret that verified under a master key other than the
   * writing one (docs/operator-guide.md, "Replacing the master key");
   * absent, hashes stay as they are.
   */
  readonly secretRenewal?: SecretRenewal | undefined;
}

/** How a secret hashed under an older master key is hashed again under the writing one. */
export interface SecretRenewal {
  /** Whether `storedHash` was made under the writing master key. */
  isCurrent(storedHash: string): boolean;
  /** The stored form of `secret` under the writing master key. */
  hash(secret: string): string;
  /** Replaces the client's current or previous secret hash only while it still is `expected` (one atomic update). */
  renewSecretHash(clientId: string, which: 'current' | 'previous', expected: string, replacement: string): Promise<boolean>;
}

// Longest ID and secret worth looking at; real ones are far shorter.
const MAX_CREDENTIAL_LENGTH = 512;
// Longest client assertion worth decoding: a PS256 one with a 4096-bit key is under 1 KiB.
const MAX_ASSERTION_LENGTH = 8192;
// Verified against when the client does not exist, so the answer takes as long.
const UNKNOWN_CLIENT_HASH = 'x'.repeat(43);

/**
 * Authenticates the client of a token, introspection, revocation or pushed
 * authorization request by `client_secret_basic` or `client_secret_post`
 * (RFC 6749 §2.3.1) or `private_key_jwt` (RFC 7523 §2.2), never two at once
 * (docs/consumer-guide.md, "Authenticating with a private key").
 *
 * Unknown client, wrong secret: one answer, so neither is revealed. A disabled
 * client is named as such only after its secret (or assertion) verified. A
 * `fapi2` client authenticates only by `private_key_jwt`.
 *
 * @throws InvalidClient when authentication fails; InvalidRequest when the
 *   request mixes methods, names two different clients, or its HTTP Basic
 *   credentials hold a control character (once decoded).
 */
export async function authenticateClient(input: ClientAuthInput, deps: ClientAuthDeps): Promise<Client> {
  if (input.clientAssertion !== undefined || input.clientAssertionType !== undefined) return authenticateByAssertion(input, deps);
  const { clientId, clientSecret, method } = readCredentials(input);
  const claimedClientId = clientId.slice(0, 100);
  const failed = (claimedClientKnown = false) => new InvalidClient('client authentication failed', method, { claimedClientId, claimedClientKnown });
  if (clientId.length > MAX_CREDENTIAL_LENGTH || clientSecret.length > MAX_CREDENTIAL_LENGTH) throw failed();

  const foreign = foreignEnvironment(clientId, clientSecret, deps.environment);
  if (foreign) {
    throw new InvalidClient(`these are ${foreign} credentials; this server is the ${deps.environment} environment`, method, {
      claimedClientId,
    });
  }

  const client = await deps.findClient(clientId);
  // FAPI 2.0 Security Profile §5.3.2.1: such a client has no secret to try.
  if (client?.profile === 'fapi2') {
    throw new InvalidClient('this client authenticates only with private_key_jwt', method, { claimedClientId, claimedClientKnown: true });
  }
  const currentMatches = deps.secrets.verify(clientSecret, client?.secretHash ?? UNKNOWN_CLIENT_HASH);
  const previousMatches =
    !currentMatches &&
    // After a rotation the previous secret works until its grace period ends.
    client?.previousSecretHash != null &&
    client.previousSecretExpiresAt !== null &&
    client.previousSecretExpiresAt > deps.clock.nowSeconds() &&
    deps.secrets.verify(clientSecret, client.previousSecretHash);
  if (!client || !(currentMatches || previousMatches)) throw failed(client !== undefined);
  if (client.status !== 'active') throw new InvalidClient('client is disabled', method, { claimedClientId, claimedClientKnown: true });
  const matched = currentMatches ? client.secretHash : (client.previousSecretHash as string);
  if (deps.secretRenewal && !deps.secretRenewal.isCurrent(matched)) {
    // Once per secret after a master key rotation; losing the race to another instance is fine.
    await deps.secretRenewal.renewSecretHash(client.id, currentMatches ? 'current' : 'previous', matched, deps.secretRenewal.hash(clientSecret));
  }
  return client;
}

/** `private_key_jwt`: the client is the assertion's `sub`, and its keys verify it ({@link verifyClientAssertion}). */
async function authenticateByAssertion(input: ClientAuthInput, deps: ClientAuthDeps): Promise<Client> {
  // RFC 6749 §2.3: a client must not use more than one authentication method.
  if (input.authorization !== undefined || input.clientSecret !== undefined) {
    throw new InvalidRequest('client authenticated with both a client assertion and a client secret; use one method');
  }
  if (input.clientAssertionType === undefined) throw new InvalidRequest('client_assertion_type is required with client_assertion');
  if (input.clientAssertion === undefined) throw new InvalidRequest('client_assertion is required with client_assertion_type');
  const assertionFailed = (description: string, claimedClientId?: string) => new InvalidClient(description, 'private_key_jwt', { claimedClientId });
  if (input.clientAssertionType !== JWT_BEARER_ASSERTION_TYPE) {
    throw assertionFailed(`client_assertion_type is not supported; supported: ${JWT_BEARER_ASSERTION_TYPE}`, input.clientId?.slice(0, 100));
  }
  const assertion = input.clientAssertion;
  if (assertion.length > MAX_ASSERTION_LENGTH) throw assertionFailed('client_assertion is not a valid signed JWT', input.clientId?.slice(0, 100));
  let iss: unknown;
  let sub: unknown;
  try {
    // Read unverified only to know whose keys verify it.
    ({ iss, sub } = decodeJwt(assertion));
  } catch {
    throw assertionFailed('client_assertion is not a valid signed JWT', input.clientId?.slice(0, 100));
  }
  if (typeof sub !== 'string' || sub === '' || sub.length > MAX_CREDENTIAL_LENGTH || hasControlCharacter(sub) || iss !== sub) {
    throw assertionFailed('client_assertion iss and sub must both be the client ID', input.clientId?.slice(0, 100));
  }
  const clientId = sub;
  const claimedClientId = clientId.slice(0, 100);
  // RFC 7521 §4.2: client_id, when sent, names the same client.
  if (input.clientId !== undefined && input.clientId !== clientId) throw assertionFailed('client_id does not match the sub of client_assertion', claimedClientId);
  const foreign = foreignEnvironment(clientId, '', deps.environment);
  if (foreign) throw assertionFailed(`these are ${foreign} credentials; this server is the ${deps.environment} environment`, claimedClientId);
  const client = await deps.findClient(clientId);
  if (!client) throw assertionFailed('client_assertion is not signed by a key registered for this client', claimedClientId);
  await verifyClientAssertion(assertion, client, { ...deps.assertions, clock: deps.clock });
  return client;
}

function readCredentials(input: ClientAuthInput): { clientId: string; clientSecret: string; method: ClientAuthMethod } {
  if (input.authorization !== undefined) {
    const basic = parseBasic(input.authorization);
    // RFC 6749 §2.3: a client must not use more than one authentication method.
    if (input.clientSecret !== undefined) {
      throw new InvalidRequest('client authenticated with both HTTP Basic and client_secret; use one method');
    }
    if (input.clientId !== undefined && input.clientId !== basic.clientId) {
      throw new InvalidRequest('client_id does not match the client of the Authorization header');
    }
    return basic;
  }
  if (input.clientSecret !== undefined) {
    if (input.clientId === undefined) throw new InvalidRequest('client_id is required with client_secret');
    return { clientId: input.clientId, clientSecret: input.clientSecret, method: 'client_secret_post' };
  }
  if (input.clientId !== undefined) throw new InvalidClient('client_secret is required', 'none');
  throw new InvalidClient('client authentication is required: HTTP Basic or client_id and client_secret', 'none');
}

/** `Basic` (in any case), spaces, the base64 credentials, optional trailing spaces: tested, not matched, on every request. */
const BASIC_CREDENTIALS = /^[Bb][Aa][Ss][Ii][Cc] +[A-Za-z0-9+/]+={0,2} *$/;

/** Reads `Basic base64(urlencode(id):urlencode(secret))` (RFC 6749 §2.3.1, RFC 7617). */
function parseBasic(header: string): { clientId: string; clientSecret: string; method: 'client_secret_basic' } {
  const malformed = () => new InvalidClient('malformed HTTP Basic credentials', 'client_secret_basic');
  if (!BASIC_CREDENTIALS.test(header)) throw malformed();
  // Between `Basic` and its spaces, and the spaces after (the pattern allows no other whitespace).
  const encoded = header.slice(6).trim();
  if (encoded.length > 4 * MAX_CREDENTIAL_LENGTH) throw malformed();
  const bytes = Buffer.from(encoded, 'base64');
  if (!isUtf8(bytes)) throw malformed();
  const decoded = bytes.toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon <= 0) throw malformed();
  const clientId = formDecode(decoded.slice(0, colon));
  const clientSecret = formDecode(decoded.slice(colon + 1));
  if (clientId === undefined || clientSecret === undefined || clientSecret === '') throw malformed();
  // The control-character rule of every other input (http/plugins/control-characters.ts),
  // once decoded: such an ID is never looked up, stored or audited.
  if (hasControlCharacter(clientId)) throw new InvalidRequest('the client ID of the HTTP Basic credentials contains a control character');
  if (hasControlCharacter(clientSecret)) throw new InvalidRequest('the client secret of the HTTP Basic credentials contains a control character');
  return { clientId, clientSecret, method: 'client_secret_basic' };
}

function formDecode(value: string): string | undefined {
  if (!value.includes('%') && !value.includes('+')) return value;
  try {
    return decodeURIComponent(value.replace(/\+/g, ' '));
  } catch {
    return undefined;
  }
}

/** For each environment, the others with the ID and secret prefixes of their credentials. */
const FOREIGN_PREFIXES = new Map(
  ENVIRONMENTS.map((own) => [
    own,
    ENVIRONMENTS.filter((env) => env !== own).map((env) => ({ env, idPrefix: clientIdPrefix(env), secretPrefix: clientSecretPrefix(env) })),
  ]),
);

/** The other environment these credentials were issued for, if their prefix says so. */
function foreignEnvironment(clientId: string, secret: string, own: Environment): Environment | undefined {
  for (const { env, idPrefix, secretPrefix } of FOREIGN_PREFIXES.get(own) ?? []) {
    if (clientId.startsWith(idPrefix) || secret.startsWith(secretPrefix)) return env;
  }
  return undefined;
}
