/**
 * Error codes Connect sends: RFC 6749 §4.1.2.1 and §5.2, RFC 6750 §3.1, RFC 9470 §3,
 * OpenID Connect's `login_required` / `consent_required` / `interaction_required`
 * and `unmet_authentication_requirements` (OpenID Connect Core Unmet Authentication Requirements 1.0),
 * RFC 9449 §7.1 and §8 (`invalid_dpop_proof`, `use_dpop_nonce`) and RFC 9126 §4 (`invalid_request_uri`).
 */
export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'invalid_scope'
  | 'unsupported_response_type'
  | 'access_denied'
  | 'login_required'
  | 'consent_required'
  | 'interaction_required'
  | 'unmet_authentication_requirements'
  | 'invalid_token'
  | 'insufficient_scope'
  | 'insufficient_user_authentication'
  | 'invalid_dpop_proof'
  | 'use_dpop_nonce'
  | 'invalid_request_uri'
  | 'server_error'
  | 'temporarily_unavailable';

/**
 * Error codes the SDK itself raises: an answer that is not Connect's
 * (`invalid_response`), a callback that fails its checks, a request that
 * never completed, or a customer who must authorize again.
 */
export type SdkErrorCode =
  | 'invalid_response'
  | 'invalid_callback'
  | 'state_mismatch'
  | 'issuer_mismatch'
  | 'timeout'
  | 'aborted'
  | 'network_error'
  | 'reauthorization_required';

/** Every code a {@link ConnectError} can carry; `switch (err.error)` narrows on it. */
export type ConnectErrorCode = OAuthErrorCode | SdkErrorCode;
