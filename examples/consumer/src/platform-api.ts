import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  createTokenVerifier,
  dpopChallenge,
  InsufficientScope,
  InsufficientUserAuthentication,
  InvalidToken,
  stepUpChallenge,
  type Clock,
  type TokenVerifier,
} from '@connect-auth/client';

/** Where Connect is and the platform API's resource-server credentials. */
export interface PlatformApiOptions {
  /** Connect's auth URL and the credentials of `connect-auth clients create --resource-server`. */
  readonly connect: { readonly authUrl: string; readonly clientId: string; readonly clientSecret: string };
  /** Seconds an active answer is reused; default the SDK's (1). */
  readonly cacheSeconds?: number;
  /** The clock the verifier's cache reads; default the system clock. */
  readonly clock?: Clock;
  /** Where a failed check is reported; default `console.error`. */
  readonly onError?: (error: unknown) => void;
  /**
   * The scopes a token must have for `/customer/profile`, e.g.
   * `['profile']`; default none (the demo client is registered without
   * scopes). A token lacking one gets 403 `insufficient_scope`.
   */
  readonly requiredScopes?: readonly string[];
  /**
   * What `POST /payouts` requires of the customer's sign-in (RFC 9470);
   * default {@link PAYOUT_SIGN_IN}: a phishing-resistant sign-in (`phr`)
   * within the last 300 seconds.
   */
  readonly payoutSignIn?: { readonly acr: readonly string[]; readonly maxAge: number };
}

/** The sign-in a payout needs by default: `phr` (a passkey) within the last 5 minutes. */
export const PAYOUT_SIGN_IN = { acr: ['phr'], maxAge: 300 } as const;

/**
 * One of the platform's own APIs, as a resource server: `GET
 * /customer/profile` accepts a customer access token (whichever merchant
 * presents it; a DPoP-bound one with its proof, docs/resource-servers.md,
 * "DPoP in the SDK's verifier") and answers with whom it stands for. It checks tokens with
 * `createTokenVerifier`, at Connect's `/introspect`, with credentials that
 * can obtain no token, and holds no key of Connect's. It may require scopes
 * (`requiredScopes`; docs/resource-servers.md, "Requiring scopes").
 *
 * `POST /payouts` is its high-risk operation: it also requires a
 * phishing-resistant sign-in (`acr` `phr`) within the last 300 seconds, and
 * answers a token that falls short 401 with the step-up challenge of RFC
 * 9470 (docs/resource-servers.md, "Requiring a strong or recent sign-in").
 */
export function createPlatformApi(options: PlatformApiOptions): { handle(request: IncomingMessage, response: ServerResponse): void; readonly verifier: TokenVerifier } {
  const verifier = createTokenVerifier({
    ...options.connect,
    ...(options.cacheSeconds === undefined ? {} : { cacheSeconds: options.cacheSeconds }),
    ...(options.clock ? { clock: options.clock } : {}),
  });

  async function route(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const path = new URL(request.url ?? '/', 'http://api.invalid').pathname;
    const operation = `${request.method} ${path}`;
    if (operation !== 'GET /customer/profile' && operation !== 'POST /payouts') return json(response, 404, { error: 'not_found', error_description: 'no such API' });
    // The request body is not read: this example's payout carries no details.
    request.resume();
    const authorization = request.headers.authorization;
    if (!authorization || !/^(Bearer|DPoP) /i.test(authorization)) {
      // RFC 6750 §3.1, RFC 9449 §7.1: a request without a token gets challenges without an error code.
      const challenges = `Bearer realm="platform-api", ${dpopChallenge()}`;
      return json(response, 401, { error: 'invalid_token', error_description: 'an access token is required: Authorization: Bearer <access_token>' }, { 'www-authenticate': challenges });
    }
    const dpop = /^DPoP /i.test(authorization);
    // The URL as the caller addressed it, for the DPoP proof's htu (behind a proxy: its public address).
    const presented = { authorization, dpop: request.headers.dpop, method: request.method ?? 'GET', url: `http://${request.headers.host}${request.url}` };
    try {
      if (operation === 'POST /payouts') {
        // A high-risk operation: a strong and recent sign-in, or the step-up challenge (RFC 9470 §3).
        const token = await verifier.verifyRequest(presented, { kind: 'customer', scopes: options.requiredScopes, ...(options.payoutSignIn ?? PAYOUT_SIGN_IN) });
        return json(response, 200, { payout: 'accepted', profileId: token.profileId, clientId: token.clientId, acr: token.authentication?.acr, authTime: token.authentication?.authTime });
      }
      const token = await verifier.verifyRequest(presented, { kind: 'customer', scopes: options.requiredScopes });
      return json(response, 200, { profileId: token.profileId, clientId: token.clientId, tokenExpiresAt: token.expiresAt, checkedBy: 'introspection' });
    } catch (error) {
      if (error instanceof InvalidToken) {
        // RFC 6750 §3.1, RFC 9449 §7.1: the token is malformed, expired, revoked or not a customer's, or its DPoP proof failed.
        const challenge = dpop ? dpopChallenge(error) : 'Bearer error="invalid_token"';
        return json(response, 401, { error: 'invalid_token', error_description: error.description }, { 'www-authenticate': challenge });
      }
      if (error instanceof InsufficientUserAuthentication) {
        // RFC 9470 §3: a valid token whose sign-in is too weak or too old; the challenge says what a new one must meet.
        return json(response, 401, { error: error.error, error_description: error.description }, { 'www-authenticate': stepUpChallenge(error) });
      }
      if (error instanceof InsufficientScope) {
        // RFC 6750 §3.1: a valid token without a scope this API needs; the challenge names what it needs.
        const scope = error.scope ?? '';
        return json(response, 403, { error: 'insufficient_scope', error_description: error.description, scope }, { 'www-authenticate': `Bearer error="insufficient_scope", scope="${scope}"` });
      }
      // The check could not be made (Connect unreachable, this API's credentials refused): not the caller's fault.
      (options.onError ?? console.error)(error);
      return json(response, 503, { error: 'temporarily_unavailable', error_description: 'the token could not be checked; try again shortly' }, { 'retry-after': '1' });
    }
  }

  return {
    verifier,
    handle(request, response) {
      void route(request, response);
    },
  };
}

/** Starts the platform API on `host:port` (port 0: a free one). */
export async function startPlatformApi(
  options: PlatformApiOptions & { readonly host?: string; readonly port?: number },
): Promise<{ readonly url: string; close(): Promise<void> }> {
  const api = createPlatformApi(options);
  const server = createServer((request, response) => api.handle(request, response));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 4001, options.host ?? '127.0.0.1', resolve);
  });
  const { address, port } = server.address() as AddressInfo;
  return {
    url: `http://${address}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function json(response: ServerResponse, status: number, body: object, headers: Record<string, string> = {}): void {
  response.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers }).end(JSON.stringify(body));
}
