import type { Environment } from '../environment.js';

/** The grant types a client can be allowed to use (docs/operator-guide.md, "Onboarding a consumer"). */
export type GrantType = 'client_credentials' | 'authorization_code' | 'refresh_token';

/** Every grant type Connect knows, in documentation order. */
export const GRANT_TYPES: readonly GrantType[] = ['client_credentials', 'authorization_code', 'refresh_token'];

/** Grants a new client gets when none are named: refresh is enabled per use case (docs/operator-guide.md). */
export const DEFAULT_GRANTS: readonly GrantType[] = ['client_credentials', 'authorization_code'];

/** Narrows an arbitrary string to a {@link GrantType}. */
export function isGrantType(value: string): value is GrantType {
  return (GRANT_TYPES as readonly string[]).includes(value);
}

/** Whether a client may authenticate and obtain tokens. */
export type ClientStatus = 'active' | 'disabled';

/**
 * What a client is (docs/resource-servers.md, "What a resource server's
 * credentials can do"):
 * - `consumer`: an API consumer (a merchant). It obtains tokens with its
 *   grants and sees only its own tokens at `/introspect`.
 * - `resource_server`: one of the platform's APIs. It has no grant and no
 *   redirect URI, so it obtains no token at all, and `/introspect` answers
 *   it for every access token of its environment, whichever client holds it.
 */
export type ClientKind = 'consumer' | 'resource_server';

/** Every client kind. */
export const CLIENT_KINDS: readonly ClientKind[] = ['consumer', 'resource_server'];

/**
 * The rules a client is held to (docs/operator-guide.md, "FAPI 2.0 clients"):
 * - `standard`: the rules of every client; it may use pushed requests,
 *   DPoP and `private_key_jwt` when it chooses.
 * - `fapi2`: the FAPI 2.0 Security Profile: pushed requests, PKCE S256,
 *   `private_key_jwt` (no secret) and DPoP-bound tokens required, codes
 *   valid 60 seconds.
 */
export type ClientProfile = 'standard' | 'fapi2';

/** Every client profile. */
export const CLIENT_PROFILES: readonly ClientProfile[] = ['standard', 'fapi2'];

/** A client's public keys for `private_key_jwt` (RFC 7517 §5): the `keys` of a JWK Set, each a JSON object. */
export interface ClientJwks {
  readonly keys: readonly Readonly<Record<string, unknown>>[];
}

/**
 * A registered API consumer.
 *
 * The secret is never held in clear: `secretHash` is a keyed hash (see
 * `client-secret.ts`). Timestamps are epoch seconds.
 */
export interface Client {
  readonly id: string;
  readonly name: string;
  readonly secretHash: string;
  readonly kind: ClientKind;
  /** The one redirect URI, matched exactly at `/authorize`; `null` for a resource server, which has none. */
  readonly redirectUri: string | null;
  /** Always empty for a resource server. */
  readonly grants: readonly GrantType[];
  readonly requirePkce: boolean;
  /**
   * The scopes the client is registered with (RFC 6749 §3.3; docs/tokens.md,
   * "Scopes"): distinct scope tokens, at most 20 of at most 64 characters;
   * empty for none. Every token it obtains carries a subset of them; a
   * request without `scope` gets them all.
   */
  readonly scopes: readonly string[];
  /**
   * What some of its scopes mean to a customer, in the operator's words
   * (`clients update --scope-description SCOPE=TEXT`; docs/hosted-login.md,
   * "Consent"), shown on the consent page as they are, in either language.
   * Keys are among {@link scopes}; a scope without one is described by the
   * pages' own default.
   */
  readonly scopeDescriptions: Readonly<Record<string, string>>;
  readonly status: ClientStatus;
  readonly createdAt: number;
  readonly updatedAt: number;
  /** The secret before the last rotation, still accepted until {@link previousSecretExpiresAt}. */
  readonly previousSecretHash: string | null;
  readonly previousSecretExpiresAt: number | null;
  /**
   * Client access tokens issued at or before this second (`iat <=`) are
   * refused, also after the client is enabled again: set by `clients
   * disable` and `clients enable`, it only ever moves forward
   * (docs/operator-guide.md, "Disabling a client"). `null`: none ended.
   */
  readonly tokensEndedAt: number | null;
  /** `standard` unless the operator chose `fapi2`. */
  readonly profile: ClientProfile;
  /** The public keys registered for `private_key_jwt` (`--jwks FILE`); `null`: none. */
  readonly jwks: ClientJwks | null;
  /** Where the client publishes its keys instead (`--jwks-uri URL`); `null`: none. */
  readonly jwksUri: string | null;
}

/** The prefix of every client ID of an environment, e.g. `cid_sandbox_`. */
export function clientIdPrefix(environment: Environment): string {
  return `cid_${environment}_`;
}

/** The prefix of every client secret of an environment, e.g. `csk_sandbox_`. */
export function clientSecretPrefix(environment: Environment): string {
  return `csk_${environment}_`;
}
