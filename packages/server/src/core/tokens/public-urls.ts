/**
 * The public addresses of this server (docs/operator-guide.md,
 * "Configuration"). Read at the moment a
 * token is minted, because with `PORT=0` they are known only once the
 * listener is bound.
 */
export interface PublicUrls {
  /** `{auth_url}`: the token issuer (`iss`). No trailing slash. */
  readonly authUrl: string;
  /** `{base_url}`: where `/tokens` lives; the `aud` of client access tokens. No trailing slash. */
  readonly baseUrl: string;
}
