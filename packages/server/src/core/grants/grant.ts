import type { Client, GrantType } from '../clients/client.js';

/** A token request after parsing and client authentication. */
export interface TokenRequest {
  /**
   * The form parameters, each present at most once (checked at the edge):
   * only those the grant declares, besides `grant_type` and client authentication.
   */
  readonly params: Readonly<Record<string, string>>;
  /** The authenticated client, already checked to be allowed this grant. */
  readonly client: Client;
  /** The ID of the request this is part of (its `X-Request-Id`), recorded with the audit events it causes. */
  readonly correlationId?: string | undefined;
  /**
   * The thumbprint of the key of the request's verified DPoP proof (RFC
   * 9449 §5): the tokens issued are bound to it. Absent: no proof came.
   */
  readonly dpopJkt?: string | undefined;
}

/** A successful token response, in core's spelling (the HTTP edge renames fields). */
export interface TokenResult {
  readonly accessToken: string;
  /** `DPoP` when the access token is bound to a DPoP key (RFC 9449 §5), else `Bearer`. */
  readonly tokenType: 'Bearer' | 'DPoP';
  /** Lifetime of the access token in seconds. */
  readonly expiresIn: number;
  readonly refreshToken?: string;
  /** The scopes the access token was granted (RFC 6749 §5.1 `scope`, sent when there are any). */
  readonly scopes: readonly string[];
}

/**
 * One grant type of the token endpoint. Each module under `grants/` exports
 * one, with the narrow `deps` it reads.
 */
export interface GrantHandler<Deps> {
  readonly grantType: GrantType;
  /** The parameters this grant reads, besides `grant_type` and client authentication; it is handed no others. */
  readonly parameters: readonly string[];
  handle(request: TokenRequest, deps: Deps): Promise<TokenResult>;
}
