// Compile-only checks of the public API (run by `npm run typecheck`); nothing here is executed.
import {
  bearerToken,
  ClientCredentialsProvider,
  createTokenVerifier,
  ConnectError,
  dpopChallenge,
  InvalidToken,
  CustomerTokenManager,
  exchangeCode,
  InvalidClient,
  isConnectError,
  LoginRequired,
  MemoryTokenStore,
  parseCallback,
  InsufficientUserAuthentication,
  parseStepUpChallenge,
  ReauthorizationRequired,
  refreshCustomerToken,
  stepUpChallenge,
  type StepUpAuthorization,
  type StepUpDecision,
  requestClientToken,
  startAuthorization,
  systemClock,
  type AnyConnectError,
  type AuthorizationCallback,
  type ClientToken,
  type ClientTokenRequest,
  type Clock,
  type ConnectErrorCode,
  type CustomerTokens,
  type OAuthErrorCode,
  type PendingAuthorization,
  type ScopeInput,
  type SdkErrorCode,
  type TokenStore,
  type VerifiedClientToken,
  type CustomerAuthentication,
  type VerifiedCustomerToken,
  type VerifiedToken,
} from '../src/index.js';

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
function assertType<T extends true>(): T | void {}

const options = { authUrl: 'https://auth.example', clientId: 'id', clientSecret: 's' };

// --- client tokens -----------------------------------------------------------
const token: Promise<ClientToken> = requestClientToken(options);
void token;
void requestClientToken(options, { signal: AbortSignal.timeout(1000) });
// @ts-expect-error clientSecret is required
void requestClientToken({ authUrl: 'https://auth.example', clientId: 'id' });
// @ts-expect-error timeoutMs is a number of milliseconds
void requestClientToken({ ...options, timeoutMs: '10s' });

const provider = new ClientCredentialsProvider({ ...options, renewBeforeSeconds: 30, retry: { attempts: 5, sleep: async () => {} } });
const fromProvider: Promise<ClientToken> = provider.getToken({ signal: new AbortController().signal });
void fromProvider;
declare const clientToken: ClientToken;
assertType<Equal<typeof clientToken.tokenType, 'Bearer' | 'DPoP'>>();
// @ts-expect-error tokens are read-only
clientToken.accessToken = 'x';

// --- FAPI 2.0: private_key_jwt, DPoP, pushed authorization ----------------------
declare const signingKey: CryptoKey;
declare const dpopKey: CryptoKeyPair;
const fapi = { authUrl: 'https://auth.example', clientId: 'id', privateKey: signingKey, keyId: 'k1', dpop: true } as const;
void requestClientToken(fapi);
void new ClientCredentialsProvider({ ...fapi, dpop: { key: dpopKey }, algorithm: 'ES256' }).fetch('https://api.example/x', { method: 'POST' });
void new CustomerTokenManager({ ...fapi, redirectUri: 'https://shop.example/cb', pushedAuthorization: true });
void requestClientToken({ authUrl: 'https://auth.example', clientId: 'id', privateKey: { kty: 'EC', crv: 'P-256', x: 'x', y: 'y', d: 'd', kid: 'k1' } });
void startAuthorization({ ...fapi, redirectUri: 'https://shop.example/cb' });
// @ts-expect-error exactly one of clientSecret and privateKey: not both
void requestClientToken({ authUrl: 'https://auth.example', clientId: 'id', clientSecret: 's', privateKey: signingKey });
// @ts-expect-error keyId belongs to privateKey
void requestClientToken({ ...options, keyId: 'k1' });
// @ts-expect-error algorithm is ES256, PS256 or EdDSA
void requestClientToken({ ...fapi, algorithm: 'HS256' });
// @ts-expect-error a DPoP key is a key pair
void requestClientToken({ ...fapi, dpop: { key: signingKey } });
// @ts-expect-error a private JWK has "d"
void requestClientToken({ authUrl: 'https://auth.example', clientId: 'id', privateKey: { kty: 'EC', crv: 'P-256', x: 'x', y: 'y' } });
declare const customerTokens: CustomerTokens;
assertType<Equal<typeof customerTokens.tokenType, 'DPoP' | undefined>>();
declare const fapiVerifier: ReturnType<typeof createTokenVerifier>;
const verifiedRequest = fapiVerifier.verifyRequest({ authorization: 'DPoP x', dpop: 'p', method: 'GET', url: 'https://api.example/x' }, { kind: 'customer' });
assertType<Equal<Awaited<typeof verifiedRequest>['kind'], 'customer'>>();
assertType<Equal<Awaited<typeof verifiedRequest>['jkt'], string | undefined>>();
const challenge: string = dpopChallenge(new InvalidToken('bad proof'));
void challenge;
void createTokenVerifier({ authUrl: 'https://auth.example', clientId: 'api', privateKey: signingKey });
// @ts-expect-error a verifier presents no token: no dpop option
void createTokenVerifier({ authUrl: 'https://auth.example', clientId: 'api', clientSecret: 's', dpop: true });

// --- scopes ---------------------------------------------------------------------
void requestClientToken(options, { scope: 'payments:read profile' });
void requestClientToken(options, { scope: ['payments:read', 'profile'] as const });
const scopedRequest: ClientTokenRequest = { scope: ['profile'], signal: AbortSignal.timeout(1000) };
void scopedRequest;
// @ts-expect-error a scope is a string or a list of strings
void requestClientToken(options, { scope: 42 });
void new ClientCredentialsProvider({ ...options, scope: ['payments:read'] });
void startAuthorization({ ...options, redirectUri: 'https://shop.example/cb', scope: 'profile' });
assertType<Equal<ScopeInput, string | readonly string[]>>();
assertType<Equal<typeof clientToken.scope, string | undefined>>();
declare const scopedTokens: CustomerTokens;
assertType<Equal<typeof scopedTokens.scope, string | undefined>>();

// --- clocks: the server's fixedClock shape fits -------------------------------
const clock: Clock = { nowSeconds: () => 0 };
void new ClientCredentialsProvider({ ...options, clock });
void systemClock.nowSeconds();
// @ts-expect-error a Clock answers in seconds through nowSeconds()
const badClock: Clock = { now: () => new Date() };
void badClock;

// --- linking a customer ------------------------------------------------------
async function link(callbackUrl: string): Promise<CustomerTokens> {
  const pending: PendingAuthorization = await startAuthorization({ ...options, redirectUri: 'https://shop.example/cb', prompt: 'login' });
  // @ts-expect-error prompt is login or none
  void startAuthorization({ ...options, redirectUri: 'https://shop.example/cb', prompt: 'consent' });
  const callback: AuthorizationCallback = parseCallback(callbackUrl, { state: pending.state, issuer: options.authUrl });
  // @ts-expect-error the expected issuer is required
  parseCallback(callbackUrl, { state: pending.state });
  assertType<Equal<typeof pending.codeVerifier, string | undefined>>();
  return exchangeCode(options, { ...pending, code: callback.code });
}
void link;

// --- customer tokens ---------------------------------------------------------
const store: TokenStore = {
  get: async () => undefined,
  set: async () => {},
  delete: () => {},
};
const manager = new CustomerTokenManager({ ...options, redirectUri: 'https://shop.example/cb', store, refreshVia: 'tokens' });
void new CustomerTokenManager({ ...options, redirectUri: 'https://shop.example/cb', store: new MemoryTokenStore() });
// @ts-expect-error redirectUri is required
void new CustomerTokenManager({ ...options });
// @ts-expect-error refresh happens at token or tokens only
void new CustomerTokenManager({ ...options, redirectUri: 'https://shop.example/cb', refreshVia: 'introspect' });
const accessToken: Promise<string> = manager.getAccessToken('customer-1');
void accessToken;
declare const tokens: CustomerTokens;
void refreshCustomerToken(options, tokens, { via: 'token' });
// @ts-expect-error stored tokens are read-only
tokens.expiresAt = 0;

// --- checking tokens in a resource server -----------------------------------
const verifier = createTokenVerifier({ ...options, cacheSeconds: 1 });
// @ts-expect-error a verifier needs no base URL: it only introspects
void createTokenVerifier({ ...options, baseUrl: 'https://api.example' });
const header: string | undefined = bearerToken('Bearer x.y.z');
void header;
void (async () => {
  // No kind asked: either kind, narrowed by `switch (token.kind)`.
  const any = await verifier.verify('x.y.z');
  assertType<Equal<typeof any, VerifiedToken>>();
  if (any.kind === 'customer') {
    const profileId: string = any.profileId;
    void profileId;
  } else {
    // @ts-expect-error a client token has no customer
    void any.profileId;
  }
  const customer = await verifier.verify(header, { kind: 'customer' });
  assertType<Equal<typeof customer, VerifiedCustomerToken>>();
  assertType<Equal<typeof customer.authentication, CustomerAuthentication | null>>();
  if (customer.authentication) {
    const signedInAt: number = customer.authentication.authTime;
    const methods: readonly string[] = customer.authentication.amr;
    void signedInAt;
    void methods;
  }
  const client = await verifier.verify('x.y.z', { kind: 'client', signal: AbortSignal.timeout(1000) });
  assertType<Equal<typeof client, VerifiedClientToken>>();
  // @ts-expect-error not a kind of token
  await verifier.verify('x.y.z', { kind: 'refresh' });
  const scoped = await verifier.verify('x.y.z', { kind: 'customer', scopes: ['payments:read'] });
  assertType<Equal<typeof scoped.scopes, readonly string[]>>();
  await verifier.verify('x.y.z', { scopes: 'payments:read profile' });
  // @ts-expect-error required scopes are strings
  await verifier.verify('x.y.z', { scopes: [1] });
  // @ts-expect-error verified tokens are read-only
  customer.profileId = 'x';
  // Step-up requirements (RFC 9470): acr values and a max_age in seconds.
  await verifier.verify('x.y.z', { kind: 'customer', acr: ['phr'], maxAge: 300 });
  // @ts-expect-error acr is a list of values
  await verifier.verify('x.y.z', { acr: 'phr' });
  // @ts-expect-error maxAge is seconds
  await verifier.verify('x.y.z', { maxAge: '300' });
})();

// --- step-up: the API's header, the consumer's decision ----------------------
declare const weak: InsufficientUserAuthentication;
assertType<Equal<typeof weak.error, 'insufficient_user_authentication'>>();
assertType<Equal<typeof weak.acrValues, readonly string[]>>();
assertType<Equal<typeof weak.maxAge, number | undefined>>();
const challengeHeader: string = stepUpChallenge(weak);
void challengeHeader;
void (async () => {
  const decision: StepUpDecision | undefined = parseStepUpChallenge(new Response(null, { status: 401 }));
  if (decision) {
    assertType<Equal<typeof decision.action, 'reauthorize'>>();
    void startAuthorization({ ...options, redirectUri: 'https://shop.example/cb', acrValues: decision.acrValues, maxAge: decision.maxAge });
  }
  void parseStepUpChallenge('Bearer error="insufficient_user_authentication"');
  // @ts-expect-error acrValues is a list
  void startAuthorization({ ...options, redirectUri: 'https://shop.example/cb', acrValues: 'phr' });
  const manager = new CustomerTokenManager({ ...options, redirectUri: 'https://shop.example/cb' });
  const stepUp: StepUpAuthorization | undefined = await manager.stepUpAuthorization('u1', new Response(null, { status: 401 }));
  if (stepUp) void stepUp.authorization.url;
})();

// --- errors: a discriminated union -------------------------------------------
assertType<Equal<ConnectErrorCode, OAuthErrorCode | SdkErrorCode>>();
// @ts-expect-error not a Connect error code
const bad: ConnectErrorCode = 'no_such_error';
void bad;

declare const err: ConnectError;
switch (err.error) {
  case 'invalid_client': {
    const code: 'invalid_client' = err.error;
    void code;
    break;
  }
  default: {
    const rest: Exclude<ConnectErrorCode, 'invalid_client'> = err.error;
    void rest;
  }
}

declare const caught: unknown;
if (isConnectError(caught)) {
  assertType<Equal<typeof caught, AnyConnectError>>();
  switch (caught.error) {
    case 'reauthorization_required': {
      // Narrowed to the subclass: its authorization is there.
      const pending: PendingAuthorization = caught.authorization;
      const reason: 'no_tokens' | 'refresh_expired' | 'refresh_rejected' | 'no_refresh_token' = caught.reason;
      void pending;
      void reason;
      break;
    }
    case 'login_required': {
      const narrowed: LoginRequired = caught;
      void narrowed;
      break;
    }
    case 'insufficient_scope': {
      // The scopes a resource server asked for, when known.
      const needed: string | undefined = caught.scope;
      void needed;
      break;
    }
    case 'invalid_client': {
      const narrowed: InvalidClient = caught;
      // @ts-expect-error only ReauthorizationRequired carries an authorization
      void caught.authorization;
      void narrowed;
      break;
    }
    default:
      void caught.status;
  }
}

// Every code is a case: a new code breaks this exhaustive switch at compile time.
function describeCode(code: ConnectErrorCode): string {
  switch (code) {
    case 'invalid_request':
    case 'invalid_client':
    case 'invalid_grant':
    case 'unauthorized_client':
    case 'unsupported_grant_type':
    case 'invalid_scope':
    case 'unsupported_response_type':
    case 'invalid_token':
    case 'insufficient_scope':
      return 'fix the request or the credentials';
    case 'access_denied':
    case 'login_required':
    case 'consent_required':
    case 'interaction_required':
    case 'unmet_authentication_requirements':
    case 'invalid_request_uri':
    case 'reauthorization_required':
    case 'insufficient_user_authentication':
      return 'send the customer through the authorization';
    case 'server_error':
    case 'temporarily_unavailable':
    case 'timeout':
    case 'aborted':
    case 'network_error':
      return 'try again later';
    case 'invalid_dpop_proof':
    case 'use_dpop_nonce':
    case 'invalid_response':
    case 'invalid_callback':
    case 'state_mismatch':
    case 'issuer_mismatch':
      return 'refuse the answer';
    default: {
      const unreachable: never = code;
      return unreachable;
    }
  }
}
void describeCode;

// instanceof works per class as well.
if (caught instanceof ReauthorizationRequired) void caught.authorization.url;
