import type { ConnectErrorCode, OAuthErrorCode } from './error-codes.js';

/** What to do next, per error code, when nothing more particular is known. */
export const HINTS: Readonly<Record<ConnectErrorCode, string>> = {
  invalid_request:
    'Connect refused a malformed request: the description names the parameter at fault; fix the calling code or its configuration, as sending the same request again will fail again.',
  invalid_client:
    'Check the client ID and secret for this environment (sandbox credentials do not work in production); if the secret was rotated, use the new one; if both are right, ask the operator whether the client is disabled.',
  invalid_grant:
    'Connect refused the code or refresh token for the reason in the description; unless it names a value to correct, send the customer through the authorization again.',
  unauthorized_client:
    'This client may not use this grant: ask the operator to enable it for the client (the refresh_token grant is enabled per client).',
  unsupported_grant_type:
    'This server does not offer the grant: check that authUrl points at Connect and that the grant is in grant_types_supported of its discovery metadata.',
  invalid_scope: 'Request only what the client was granted, or ask the operator to grant it.',
  unsupported_response_type: 'The authorization URL must use response_type=code: build it with startAuthorization.',
  access_denied: 'The customer cancelled on the hosted pages: offer the link again and let the customer choose; do not retry on their behalf.',
  login_required: 'There was no session at Connect for prompt=none: start the authorization again without prompt=none so the customer can log in.',
  consent_required:
    'With prompt=none Connect cannot ask for the approval: start the authorization again without prompt=none so that its consent page asks the customer.',
  interaction_required: 'Start the authorization again without prompt=none so the customer can use the hosted pages.',
  unmet_authentication_requirements:
    'The authorization asked for acr_values=phr and the customer could not use a passkey: offer another way to go on, or tell the customer this needs a passkey; sending them round again with phr ends the same.',
  invalid_token:
    'Get a new access token (ClientCredentialsProvider.invalidate() then getToken(), or CustomerTokenManager.refresh()), and authorize the customer again if that fails.',
  insufficient_scope: 'The token lacks a permission this API needs: ask the operator what the client must be granted.',
  insufficient_user_authentication:
    'A refresh keeps the sign-in as it was: send the customer through the authorization again with err.acrValues as acr_values and err.maxAge as max_age (parseStepUpChallenge reads them from an API answer).',
  invalid_dpop_proof:
    'Connect refused the DPoP proof: check that the system clock is right (a proof is dated) and that the tokens were obtained with the same DPoP key (dpop: { key }) the SDK is using now.',
  use_dpop_nonce:
    'The server asked for a DPoP nonce and refused the proof that carried it too: check the system clock and that nothing between the SDK and the server drops the DPoP-Nonce header.',
  invalid_request_uri:
    'The pushed authorization request expired (60 seconds), was used already or belongs to another client: start the authorization again and send the customer to the new URL at once.',
  server_error: 'Connect failed unexpectedly: try again later; if it persists, tell the operator the time of the failure and the request.',
  temporarily_unavailable: 'Connect is busy or restarting: try again after retryAfter seconds when set, otherwise after a backoff.',
  invalid_response:
    'Something other than Connect answered (a proxy, a wrong URL): check that authUrl and baseUrl point at Connect and that nothing in between rewrites its answers.',
  invalid_callback:
    'This is not a redirect from Connect: pass parseCallback the full callback URL (or path with its query) unchanged, and start the authorization again.',
  state_mismatch:
    'Do not exchange any code from it: the callback does not answer the authorization kept for this session (forged, stale, or from another tab); start the authorization again.',
  issuer_mismatch:
    'Do not use this answer, which did not come from the Connect configured as authUrl; check that authUrl is exactly the issuer Connect publishes, and start the authorization again.',
  timeout: 'Connect did not answer within timeoutMs: try again later, check the network path to Connect, or raise timeoutMs.',
  aborted: 'Your AbortSignal cancelled the call: nothing to do unless that was unexpected.',
  network_error: 'Connect could not be reached: check authUrl and baseUrl, DNS, proxies and firewalls, then try again.',
  reauthorization_required:
    "Send the customer's browser to err.authorization.url and keep its state and codeVerifier with the session until the callback arrives.",
};

/** A binding mismatch leaves the code unused (docs/journey.md, the code): it is exchanged again with the right value. */
const CODE_STILL_VALID = 'The code is still valid and unused: exchange it again within its lifetime';

/**
 * Hints for particular answers of Connect: its `error_description`s
 * (packages/server/src) for which the code's general hint would say
 * something untrue or too little. The first entry whose code and pattern
 * match wins; `test/error-table.test.ts` drives each against a server.
 */
const DESCRIBED_HINTS: ReadonlyArray<{ readonly code: OAuthErrorCode; readonly description: RegExp; readonly hint: string }> = [
  // The code exchange (docs/consumer-guide.md): a wrong binding leaves the code as it was.
  {
    code: 'invalid_grant',
    description: /^redirect_uri does not match the authorization request$/,
    hint: `${CODE_STILL_VALID}, with redirect_uri set to the one the authorization request carried: the redirect URI registered for this client (PendingAuthorization.redirectUri).`,
  },
  {
    code: 'invalid_grant',
    description: /^code_verifier does not match the code_challenge$/,
    hint: `${CODE_STILL_VALID}, with the code_verifier that matches the code_challenge: the one kept with this authorization's state (PendingAuthorization.codeVerifier).`,
  },
  {
    code: 'invalid_grant',
    description: /^code_verifier is required/,
    hint: `${CODE_STILL_VALID}, with the code_verifier kept with this authorization's state (PendingAuthorization.codeVerifier).`,
  },
  {
    code: 'invalid_grant',
    description: /^code_verifier given, but/,
    hint: `${CODE_STILL_VALID}, without a code_verifier.`,
  },
  {
    code: 'invalid_grant',
    description: /^authorization code was already used/,
    hint: 'Exchange each code once (exchangeCode is never retried for this reason), and send the customer through the authorization again for new tokens.',
  },
  {
    code: 'invalid_grant',
    description: /^authorization code has expired or was ended$/,
    hint: 'Send the customer through the authorization again, and exchange the new code as soon as the callback arrives (a code lives 300 seconds unless the operator set CONNECT_CODE_TTL).',
  },
  {
    code: 'invalid_grant',
    description: /^authorization code is invalid$/,
    hint: "Pass the callback's code unchanged, with the credentials of the client that started the authorization; if both are right, send the customer through the authorization again.",
  },
  {
    code: 'invalid_grant',
    description: /^the redirect_uri of this code is no longer registered for the client$/,
    hint: "The operator replaced this client's redirect URI after the code was issued, so the code is refused: set redirectUri to the newly registered one, then send the customer through the authorization again.",
  },
  {
    code: 'invalid_grant',
    description: /^the authorization code was ended/,
    hint: 'The customer was locked or the client disabled during the exchange, so no tokens were issued: ask the operator, then send the customer through the authorization again.',
  },
  // The refresh (sections 4 and 7): Connect says whether the token was revoked or expired.
  {
    code: 'invalid_grant',
    description: /^refresh token has been revoked$/,
    hint: "The customer's session at Connect was ended (revoked at /revoke or by unlink, its code exchanged a second time, the customer locked or their PIN reset, or the client disabled) and retrying will not help: send the customer through the authorization again.",
  },
  {
    code: 'invalid_grant',
    description: /^refresh token has expired$/,
    hint: 'Send the customer through the authorization again: a refresh token is not renewed past its lifetime (7 days unless the operator set CONNECT_REFRESH_TOKEN_TTL).',
  },
  {
    code: 'invalid_grant',
    description: /^refresh token is invalid or expired$/,
    hint: "Send the customer through the authorization again: Connect did not accept the token's signature or expiry (past its lifetime, altered, or signed by a key since revoked or by another environment).",
  },
  {
    code: 'invalid_grant',
    description: /^refresh token was issued to another client$/,
    hint: 'Refresh with the client ID and secret of the client the customer linked through; tokens stored for one client do not work with another.',
  },
  {
    code: 'invalid_grant',
    description: /^refresh token is invalid$/,
    hint: 'It is not the current refresh token of a session of this client: send the customer through the authorization again.',
  },
  {
    code: 'invalid_grant',
    description: /Request-Reference-No are no longer valid/,
    hint: 'A refresh sent now gets a new reference from this SDK; if that is refused too, send the customer through the authorization again.',
  },
  // private_key_jwt (section 13): the assertion, not a secret, was refused.
  {
    code: 'invalid_client',
    description: /^this client authenticates only with private_key_jwt$/,
    hint: 'This is a FAPI 2.0 client, which has no secret: configure privateKey (the private half of a key in its registered JWKS) instead of clientSecret.',
  },
  {
    code: 'invalid_client',
    description: /^client_assertion is not signed by a key registered/,
    hint: "Sign with the private half of a key in the client's registered JWKS: check privateKey, and keyId against the key's kid.",
  },
  {
    code: 'invalid_client',
    description: /^client_assertion (has expired|iat is in the future|is not valid yet)/,
    hint: 'Set the system clock right (NTP): the SDK dates each assertion by it, and Connect accepts it only within its lifetime.',
  },
  {
    code: 'invalid_client',
    description: /jwks_uri; try again later$/,
    hint: "Connect could not fetch the client's keys from its jwks_uri: make sure that address answers with the JWK Set, then try again.",
  },
  {
    code: 'unauthorized_client',
    description: /^a resource server has no authorization requests to push$/,
    hint: 'A resource server checks tokens and starts no authorization: push with the credentials of the client the customer links through.',
  },
  // DPoP (section 13): tokens and codes bound to a key work only with that key.
  {
    code: 'invalid_grant',
    description: /bound this code to a DPoP key/,
    hint: `${CODE_STILL_VALID}, with the DPoP key the authorization was started with: the same dpop: { key }, or dpop: true in the same process (its key is made once per client and process).`,
  },
  {
    code: 'invalid_grant',
    description: /bound to another DPoP key/,
    hint: 'The tokens work only with the DPoP key they were obtained with: pass that key pair as dpop: { key }; a key made by dpop: true is gone after a restart, and then the customer must authorize again.',
  },
  // Request-Reference-No at POST /tokens (section 7): a 409 is not a malformed request.
  {
    code: 'invalid_request',
    description: /^a request with this Request-Reference-No is still being processed$/,
    hint: 'Send the same request again in a moment, with the same reference: Connect then answers with the result of the first.',
  },
  {
    code: 'invalid_request',
    description: /^this Request-Reference-No was already used for a different request$/,
    hint: 'Give each refresh a new reference (refreshCustomerToken does) and reuse one only to retry the very same request.',
  },
  // The bearer token of POST /tokens (section 7).
  {
    code: 'invalid_token',
    description: /^the access token has been revoked$/,
    hint: 'A revoked token stays refused: get a new one (ClientCredentialsProvider.invalidate() then getToken()).',
  },
  {
    code: 'invalid_token',
    description: /^the (client of this access token is disabled|access token was ended when its client was disabled)$/,
    hint: 'Ask the operator whether the client was disabled: no new token is issued to a disabled client.',
  },
  {
    code: 'invalid_client',
    description: /^client is disabled$/,
    hint: 'Ask the operator to enable the client again (connect-auth clients enable ID); a disabled client gets no tokens.',
  },
  {
    code: 'invalid_client',
    description: /^these are \w+ credentials; this server is the \w+ environment$/,
    hint: "Use this environment's client ID and secret, or point authUrl at the Connect of the credentials' environment.",
  },
  {
    code: 'unauthorized_client',
    description: /^a resource server obtains no tokens/,
    hint: 'Use these credentials with createTokenVerifier only; a client that obtains tokens is registered without --resource-server.',
  },
  {
    code: 'unauthorized_client',
    description: /^this client is not allowed the \w+ grant$/,
    hint: 'Ask the operator to add that grant to the client (connect-auth clients update ID --grants …).',
  },
  {
    code: 'unauthorized_client',
    description: /^refresh is not enabled for this client$/,
    hint: "Ask the operator to add the refresh_token grant to the client (connect-auth clients update ID --grants client_credentials,authorization_code,refresh_token); until then customers authorize again once their access token expires.",
  },
  {
    code: 'invalid_scope',
    description: /this client is not registered for/,
    hint: 'The scopes a client may have are those connect-auth clients show ID lists for it.',
  },
  {
    code: 'invalid_scope',
    description: /the authorization did not grant/,
    hint: 'A wider scope needs a new authorization of the customer, with that scope.',
  },
];

/** The hint for an error of `code` whose description is `description`. */
export function hintFor(code: ConnectErrorCode, description: string): string {
  for (const entry of DESCRIBED_HINTS) {
    if (entry.code === code && entry.description.test(description)) return entry.hint;
  }
  return HINTS[code];
}
