/**
 * `@connect-auth/client`: the consumer SDK for Connect.
 *
 * One runtime dependency, `jose` (JWS signing and verification for
 * `private_key_jwt` assertions and DPoP proofs); besides it needs `fetch`,
 * `AbortSignal`, Web Crypto (`crypto.getRandomValues`, `crypto.subtle`,
 * `crypto.randomUUID`), `URL` and `btoa`, so it runs on Node.js 20.19+ and
 * any runtime that has them.
 *
 * - Where Connect is: {@link discover} reads and checks its RFC 8414 metadata.
 * - Client tokens: {@link ClientCredentialsProvider} (cached, renewed, single-flight, retried)
 *   or {@link requestClientToken} (one request).
 * - Linking a customer: {@link startAuthorization}, {@link parseCallback}, {@link exchangeCode}.
 * - Keeping customer tokens usable: {@link CustomerTokenManager} with a {@link TokenStore}.
 * - Checking tokens in one of the platform's APIs (a resource server): {@link createTokenVerifier},
 *   which can require scopes and a strong or recent sign-in ({@link stepUpChallenge} answers the latter).
 * - Step-up (RFC 9470): {@link parseStepUpChallenge} and `CustomerTokenManager.stepUpAuthorization`
 *   turn an API's challenge into a new authorization with `acr_values` and `max_age`.
 * - Scopes: `scope` of {@link requestClientToken}, {@link ClientCredentialsProvider} and
 *   {@link startAuthorization}; the granted scope in `ClientToken.scope` and `CustomerTokens.scope`.
 * - FAPI 2.0 (docs/consumer-guide.md, "FAPI 2.0"): `privateKey` instead of `clientSecret`
 *   (`private_key_jwt`, a fresh assertion per request), `dpop: true` or `dpop: { key }` (every
 *   token bound to a DPoP key, proofs and nonces handled), `pushedAuthorization` (`POST /par`,
 *   on by default with both). {@link ClientCredentialsProvider.fetch} and
 *   {@link CustomerTokenManager.fetch} present tokens as `Bearer` or `DPoP` with a proof;
 *   {@link TokenVerifier.verifyRequest} checks both schemes in an API, {@link dpopChallenge}
 *   builds its `WWW-Authenticate`.
 * - Errors: {@link ConnectError} subclasses; `switch (err.error)` narrows.
 */
export { systemClock, type Clock } from './transport/clock.js';
export {
  DEFAULT_TIMEOUT_MS,
  type ClientAuthentication,
  type ConnectOptions,
  type ConnectSettings,
  type RequestOptions,
} from './transport/connect-options.js';
export type { JoseAlgorithm, PrivateJwk } from './transport/keys.js';
export type { RetryOptions } from './transport/retry.js';
export { discover, type ConnectMetadata, type DiscoverOptions } from './flows/discover.js';

export { requestClientToken, type ClientToken, type ClientTokenRequest } from './flows/client-credentials.js';
export type { ScopeInput } from './flows/scope.js';
export {
  ClientCredentialsProvider,
  DEFAULT_RENEW_BEFORE_SECONDS,
  type ClientCredentialsProviderOptions,
  type ClientCredentialsProviderSettings,
} from './stateful/client-credentials-provider.js';

export { createPkce, randomToken, type Pkce } from './flows/pkce.js';
export {
  startAuthorization,
  type AuthorizationOptions,
  type PendingAuthorization,
  type PushedAuthorizationOptions,
} from './flows/start-authorization.js';
export { parseCallback, type AuthorizationCallback, type CallbackExpectations } from './flows/parse-callback.js';
export { exchangeCode, type CodeGrant } from './flows/exchange-code.js';
export { parseStepUpChallenge, stepUpChallenge, type StepUpDecision } from './flows/step-up-challenge.js';
export type { CustomerTokens } from './flows/customer-tokens.js';
export { refreshCustomerToken, type RefreshEndpoint, type RefreshOptions } from './stateful/refresh-customer-token.js';
export { revokeToken } from './flows/revoke-token.js';
export { MemoryTokenStore, type TokenStore } from './stateful/token-store.js';
export {
  bearerToken,
  createTokenVerifier,
  DEFAULT_TOKEN_CACHE_SECONDS,
  dpopChallenge,
  type PresentedRequest,
  type TokenKind,
  type TokenVerifier,
  type TokenVerifierOptions,
  type TokenVerifierSettings,
  type VerifiedClientToken,
  type CustomerAuthentication,
  type VerifiedCustomerToken,
  type VerifiedToken,
  type VerifiedTokenOf,
  type VerifyOptions,
} from './stateful/token-verifier.js';
export {
  CustomerTokenManager,
  type AuthorizationParams,
  type CustomerTokenManagerOptions,
  type CustomerTokenManagerSettings,
  type LinkedCustomer,
  type StepUpAuthorization,
} from './stateful/customer-token-manager.js';

export {
  AccessDenied,
  Aborted,
  ConnectError,
  ConsentRequired,
  InsufficientScope,
  InsufficientUserAuthentication,
  InteractionRequired,
  InvalidCallback,
  InvalidClient,
  InvalidDpopProof,
  InvalidGrant,
  InvalidRequest,
  InvalidRequestUri,
  InvalidResponse,
  InvalidScope,
  InvalidToken,
  isConnectError,
  IssuerMismatch,
  LoginRequired,
  NetworkError,
  ReauthorizationRequired,
  ServerError,
  StateMismatch,
  TemporarilyUnavailable,
  Timeout,
  UnauthorizedClient,
  UnmetAuthenticationRequirements,
  UnsupportedGrantType,
  UnsupportedResponseType,
  UseDpopNonce,
  type AnyConnectError,
  type ConnectErrorCode,
  type ConnectErrorOptions,
  type OAuthErrorCode,
  type ReauthorizationReason,
  type SdkErrorCode,
} from './transport/errors.js';
