/**
 * An authorization in progress: send the browser to `url`, and keep
 * `state` and `codeVerifier` (server-side, with the customer's session)
 * until the callback arrives.
 */
export interface PendingAuthorization {
  /** `{auth_url}/authorize?…`, ready for a redirect. */
  readonly url: string;
  /** Must come back unchanged in the callback. */
  readonly state: string;
  /** The PKCE verifier for the code exchange; `undefined` without PKCE. Keep it secret. */
  readonly codeVerifier: string | undefined;
  /** The redirect URI of the request; the code exchange repeats it. */
  readonly redirectUri: string;
}
