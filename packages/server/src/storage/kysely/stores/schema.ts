/**
 * The database as Kysely sees it. Table names are plural snake_case;
 * timestamps are integer epoch seconds on both engines; booleans are 0/1.
 */
import type { ColumnType, Generated } from 'kysely';


export interface ClientsTable {
  id: string;
  name: string;
  secret_hash: string;
  /** `consumer` or `resource_server` (`ClientKind`); existing clients are consumers. */
  kind: Generated<string>;
  /** The empty string for a resource server, which has no redirect URI. */
  redirect_uri: string;
  /** Space-separated grant types; empty for a resource server. */
  grants: string;
  require_pkce: number;
  status: string;
  created_at: number;
  updated_at: number;
  previous_secret_hash: string | null;
  previous_secret_expires_at: number | null;
  /** Client access tokens issued at or before this second are refused; `null`: none ended. */
  tokens_ended_at: number | null;
  /** Space-separated scopes the client is registered with (RFC 6749 §3.3); empty: none. */
  scopes: Generated<string>;
  /** JSON object from scope to the operator's description of it for customers; `{}`: none. */
  scope_descriptions: Generated<string>;
  /** `standard` or `fapi2` (`ClientProfile`); existing clients are `standard`. */
  profile: Generated<string>;
  /** The client's public keys for `private_key_jwt`, a JWK Set as JSON text; `null`: none registered. */
  jwks: string | null;
  /** Where the client publishes its JWK Set instead; `null`: none. */
  jwks_uri: string | null;
}

export interface SigningKeysTable {
  kid: string;
  alg: string;
  use: string;
  status: string;
  public_jwk: string | null;
  sealed_private_jwk: string;
  created_at: number;
  retired_at: number | null;
  verify_until: number | null;
  /** When the key starts signing; until then it is only published. */
  activates_at: number;
  /** 1, 2, 3, ... per `use`; unique with it. */
  generation: number;
}

export interface CustomersTable {
  profile_id: string;
  mobile: string;
  name: string | null;
  pin_hash: string;
  status: string;
  failed_pin_attempts: number;
  locked_until: number | null;
  /** Counts changes of the PIN and the status; known-device proofs name it (`core/journey/known-device.ts`). */
  credential_version: number;
  /** The customer's WebAuthn user handle, set once (null: no passkey added yet). */
  user_handle: string | null;
  created_at: number;
  updated_at: number;
}

export interface AuthorizationRequestsTable {
  id_hash: string;
  client_id: string;
  redirect_uri: string;
  state: string | null;
  code_challenge: string | null;
  login_hint: string | null;
  browser_hash: string;
  created_at: number;
  expires_at: number;
  completed_at: number | null;
  /** The journey's state (`core/journey/states.ts`). */
  status: string;
  profile_id: string | null;
  /** The language `ui_locales` chose (`core/authorize/ui-locales.ts`), or null. */
  ui_locale: string | null;
  /** Space-separated scopes granted to the request (`core/scopes.ts`); empty: none. */
  scope: Generated<string>;
  /** Why it was ended for its customer (`lock`, `pin_reset`), or null (migration `2026-11-28T10-00-journey-ended-by`). */
  ended_by: string | null;
  /** Space-separated known `acr_values` of the request, or null: none (migration `2026-11-28T14-00-authorization-request-acr`). */
  acr_values: string | null;
  /** The request's `max_age` in seconds, or null: none. */
  max_age: number | null;
  /** SHA-256 JWK thumbprint of the DPoP key bound, or null: none (migration `2026-11-28T15-20-dpop`). */
  dpop_jkt: ColumnType<string | null, string | null | undefined>;
}

export interface OtpChallengesTable {
  id: string;
  request_hash: string;
  purpose: string;
  mobile: string;
  profile_id: string | null;
  pending_pin_hash: string | null;
  code_hash: string;
  attempts: number;
  resends: number;
  last_sent_at: number;
  expires_at: number;
  created_at: number;
  consumed_at: number | null;
}

export interface CustomerSessionsTable {
  id_hash: string;
  profile_id: string;
  created_at: number;
  last_seen_at: number;
  expires_at: number;
  ended_at: number | null;
  /** How the customer authenticated (`core/authentication.ts`); null when unknown (migration `2026-11-28T11-00-authentication`). */
  acr: ColumnType<string | null, string | null | undefined>;
  /** RFC 8176 methods, space-separated. */
  amr: ColumnType<string | null, string | null | undefined>;
  /** When the customer completed the sign-in, epoch seconds. */
  auth_time: ColumnType<number | null, number | null | undefined>;
}

export interface AuthorizationCodesTable {
  code_hash: string;
  client_id: string;
  redirect_uri: string;
  profile_id: string;
  code_challenge: string | null;
  created_at: number;
  expires_at: number;
  consumed_at: number | null;
  /** Space-separated scopes granted to the code (`core/scopes.ts`); empty: none. */
  scope: Generated<string>;
  /** How the customer authenticated (`core/authentication.ts`); null when unknown (migration `2026-11-28T11-00-authentication`). */
  acr: ColumnType<string | null, string | null | undefined>;
  /** RFC 8176 methods, space-separated. */
  amr: ColumnType<string | null, string | null | undefined>;
  /** When the customer completed the sign-in, epoch seconds. */
  auth_time: ColumnType<number | null, number | null | undefined>;
  /** SHA-256 JWK thumbprint of the DPoP key bound, or null: none (migration `2026-11-28T15-20-dpop`). */
  dpop_jkt: ColumnType<string | null, string | null | undefined>;
}

export interface TokenSessionsTable {
  sid: string;
  client_id: string;
  profile_id: string;
  code_hash: string | null;
  refresh_jti: string;
  access_jti: string;
  created_at: number;
  refresh_expires_at: number;
  access_expires_at: number;
  revoked_at: number | null;
  /** When a refresh minted the current access token; `null` when none did. */
  refreshed_at: ColumnType<number | null, number | null | undefined>;
  /** The scope of that refresh's access token (space-separated). */
  refreshed_scope: ColumnType<string | null, string | null | undefined>;
  /** That access token, sealed (`seal()` under the refresh-reuse key, labelled with the session). */
  refreshed_access: ColumnType<string | null, string | null | undefined>;
  /** How the customer authenticated (`core/authentication.ts`); null when unknown (migration `2026-11-28T11-00-authentication`). */
  acr: ColumnType<string | null, string | null | undefined>;
  /** RFC 8176 methods, space-separated. */
  amr: ColumnType<string | null, string | null | undefined>;
  /** When the customer completed the sign-in, epoch seconds. */
  auth_time: ColumnType<number | null, number | null | undefined>;
  /** SHA-256 JWK thumbprint of the DPoP key bound, or null: none (migration `2026-11-28T15-20-dpop`). */
  dpop_jkt: ColumnType<string | null, string | null | undefined>;
}

export interface SmsOutboxTable {
  id: string;
  to_mobile: string;
  body: string;
  sent_at: number;
}

export interface RevokedTokensTable {
  jti: string;
  client_id: string;
  revoked_at: number;
  expires_at: number;
}

export interface IdempotentRequestsTable {
  client_id: string;
  reference: string;
  request_hash: string;
  sealed_response: string | null;
  created_at: number;
  expires_at: number;
}

export interface AuditEventsTable {
  id: string;
  at: number;
  type: string;
  actor: string;
  subject: string | null;
  outcome: string;
  /** JSON object, never holding a secret. */
  details: string | null;
  /** The ID of the request that caused it, if a request did. */
  request_id: string | null;
  /** How many failures an aggregated event stands for; `null`: an ordinary event. */
  count: number | null;
}

export interface ConsentsTable {
  profile_id: string;
  client_id: string;
  approved_at: number;
}

export interface RateLimitCountersTable {
  key: string;
  points: number;
  /** Epoch milliseconds; `null`: never expires. */
  expires_at: number | null;
}

/** SQLite only: the changes its triggers announced (`change-feed-sqlite.ts`). */
export interface ChangeLogTable {
  seq: Generated<number>;
  kind: string;
  key: string;
  at: number;
}

export interface Database {
  clients: ClientsTable;
  signing_keys: SigningKeysTable;
  customers: CustomersTable;
  authorization_requests: AuthorizationRequestsTable;
  otp_challenges: OtpChallengesTable;
  customer_sessions: CustomerSessionsTable;
  authorization_codes: AuthorizationCodesTable;
  token_sessions: TokenSessionsTable;
  sms_outbox: SmsOutboxTable;
  revoked_tokens: RevokedTokensTable;
  idempotent_requests: IdempotentRequestsTable;
  audit_events: AuditEventsTable;
  consents: ConsentsTable;
  rate_limit_counters: RateLimitCountersTable;
  change_log: ChangeLogTable;
  database_environment: DatabaseEnvironmentTable;
  passkeys: PasskeysTable;
  webauthn_challenges: WebAuthnChallengesTable;
  used_jtis: UsedJtisTable;
  pushed_requests: PushedRequestsTable;
  schema_releases: SchemaReleasesTable;
  master_keys: MasterKeysTable;
}

/** A customer's passkey (migration `2026-11-28T12-00-passkeys`). */
export interface PasskeysTable {
  /** base64url. */
  credential_id: string;
  profile_id: string;
  /** The customer's opaque WebAuthn user handle (base64url), the same on each of their passkeys. */
  user_handle: string;
  /** The COSE public key, base64url. */
  public_key: string;
  sign_count: number;
  /** Space-separated `AuthenticatorTransport`s; empty: unknown. */
  transports: string;
  aaguid: string | null;
  name: string | null;
  created_at: number;
  last_used_at: number | null;
  held_until: number | null;
  /** Set by `customers lock`, cleared by `customers unlock`. */
  suspended_at: number | null;
}

/** A WebAuthn ceremony's single-use challenge, bound to a journey (migration `2026-11-28T12-00-passkeys`). */
export interface WebAuthnChallengesTable {
  challenge_hash: string;
  request_hash: string;
  /** `register` or `authenticate`. */
  purpose: string;
  profile_id: string | null;
  created_at: number;
  expires_at: number;
  consumed_at: number | null;
}

/** The one row naming the environment the database belongs to (migration `2026-11-27T10-10-database-environment`). */
/** A release that migrated or started on the database (docs/upgrades.md, "Migrations across releases"). */
export interface SchemaReleasesTable {
  version: string;
  /** The oldest release whose code runs on the schema this release left. */
  oldest_compatible: string;
  recorded_at: ColumnType<number, number, never>;
}

export interface DatabaseEnvironmentTable {
  id: number;
  environment: string;
}


/** `jti`s already accepted (migration `2026-11-28T15-00-client-profiles`). */
export interface UsedJtisTable {
  /** `ReplayKind`. */
  kind: string;
  /** SHA-256 (base64url) of the `jti`'s issuer and the `jti`. */
  jti_hash: string;
  expires_at: number;
}

/** Pushed authorization requests (migration `2026-11-28T15-10-pushed-requests`). */
export interface PushedRequestsTable {
  /** SHA-256 (base64url) of the random part of the `request_uri`. */
  id_hash: string;
  client_id: string;
  /** The pushed authorization parameters: a JSON object of strings. */
  parameters: string;
  created_at: number;
  expires_at: number;
  consumed_at: number | null;
}

/** The master keys the database knows, by fingerprint (migration `2026-11-28T16-10-master-keys`). */
export interface MasterKeysTable {
  fingerprint: string;
  /** `writing`, `next`, `previous` or `retired` (`MasterKeyState`). */
  state: string;
  recorded_at: number;
  changed_at: number;
  /** The carried sub-keys, sealed under this key; null: none. */
  sealed_carried: string | null;
}
