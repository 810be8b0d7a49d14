/**
 * The database as Kysely sees it. Table names are plural snake_case;
 * timestamps are integer epoch seconds on both engines; booleans are 0/1.
 */


export interface ClientsTable {
  id: string;
  name: string;
  secret_hash: string;
  redirect_uri: string;
  /** Space-separated grant types. */
  grants: string;
  require_pkce: number;
  status: string;
  created_at: number;
  updated_at: number;
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
}

export interface Database {
  clients: ClientsTable;
  signing_keys: SigningKeysTable;
}

