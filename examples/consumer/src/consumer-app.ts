import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  CustomerTokenManager,
  isConnectError,
  ReauthorizationRequired,
  UnmetAuthenticationRequirements,
  type Clock,
  type ConnectOptions,
  type CustomerTokens,
  type RefreshEndpoint,
} from '@connect-auth/client';
import { accountPage, homePage, problemPage, relinkPage, type AccountView } from './pages.js';
import { SessionStore, type Session, type TokenSummary } from './session-store.js';

/** How the shop reaches Connect. */
export interface ConsumerAppOptions {
  /**
   * Connect's URLs and this shop's client credentials: a client secret, or
   * for a FAPI 2.0 client `privateKey` and `dpop` (docs/consumer-guide.md, "FAPI 2.0").
   */
  readonly connect: ConnectOptions;
  /** The redirect URI registered for the client; its path is the shop's callback route. */
  readonly redirectUri: string;
  /** Where customer tokens are refreshed; default `tokens` (`POST {base_url}/tokens`). */
  readonly refreshVia?: RefreshEndpoint;
  /** The clock the SDK decides expiry with; default the system clock. */
  readonly clock?: Clock;
  /**
   * The platform API the account page calls with the customer's token: the
   * example resource server of `platform-api.ts`. Default: Connect's own
   * example endpoint, `{base_url}/customer/profile`.
   */
  readonly profileUrl?: string;
  /**
   * The platform API's high-risk operation (`POST {api}/payouts` of
   * `platform-api.ts`): when set, the account page offers "Send a payout",
   * and a step-up challenge sends the customer back through Connect with
   * the `acr_values` and `max_age` it names. Default: none.
   */
  readonly payoutsUrl?: string;
}

/** The shop: a request handler for node:http, and the SDK manager it uses. */
export interface ConsumerApp {
  /** Handles one request. */
  handle(request: IncomingMessage, response: ServerResponse): void;
  /** The SDK's token manager (tokens kept in memory). */
  readonly manager: CustomerTokenManager;
}

/**
 * A small merchant web app built only on `@connect-auth/client`: "Link my
 * account" starts the authorization (state and PKCE verifier kept in a
 * server-side session), `/callback` completes it, and `/account` calls a
 * platform API (`profileUrl`) with the customer's access token and offers
 * "Refresh now". With `payoutsUrl`, "Send a payout" calls the API's
 * high-risk operation and answers its step-up challenge by sending the
 * customer through Connect again (docs/consumer-guide.md, "Step-up").
 */
export function createConsumerApp(options: ConsumerAppOptions): ConsumerApp {
  const baseUrl = (options.connect.baseUrl ?? options.connect.authUrl).replace(/\/+$/, '');
  const profileUrl = options.profileUrl ?? `${baseUrl}/customer/profile`;
  const manager = new CustomerTokenManager({
    ...options.connect,
    redirectUri: options.redirectUri,
    refreshVia: options.refreshVia ?? 'tokens',
    ...(options.clock ? { clock: options.clock } : {}),
  });
  const sessions = new SessionStore();
  const callbackPath = new URL(options.redirectUri).pathname;

  async function route(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', 'http://shop.invalid');
    const session = sessions.open(request, response);
    const route = `${request.method} ${url.pathname}`;
    if (route === 'GET /') return session.linked ? seeOther(response, '/account') : html(response, 200, homePage());
    // The POST routes carry no CSRF token of their own: the SameSite=Lax session cookie is not sent on
    // another site's POST, so a forged form finds no session. A real shop would add a token as well.
    if (route === 'POST /link') {
      const pending = await manager.startAuthorization();
      session.pending = { state: pending.state, codeVerifier: pending.codeVerifier };
      session.resumePayout = undefined; // a plain link never sends a payout
      return seeOther(response, pending.url);
    }
    if (route === `GET ${callbackPath}`) return callback(request, response, session);
    if (route === 'GET /account') return account(response, session);
    if (route === 'POST /refresh') {
      if (!session.linked) return seeOther(response, '/');
      const before = await manager.store.get(session.customerKey);
      const after = await manager.refresh(session.customerKey);
      if (before) session.lastRefresh = { before: summary(before), after: summary(after) };
      return seeOther(response, '/account');
    }
    if (route === 'POST /payout') {
      if (!session.linked) return seeOther(response, '/');
      if (!options.payoutsUrl) return html(response, 404, problemPage('Not found', 'This shop offers no payouts.', false));
      return payout(response, session, false);
    }
    if (route === 'POST /unlink') {
      await manager.unlink(session.customerKey);
      session.linked = undefined;
      session.lastRefresh = undefined;
      return seeOther(response, '/');
    }
    return html(response, 404, problemPage('Not found', `There is no page at ${url.pathname}.`, false));
  }

  async function callback(request: IncomingMessage, response: ServerResponse, session: Session): Promise<void> {
    const pending = session.pending;
    if (!pending) return html(response, 400, problemPage('Nothing to complete', 'This browser has no link in progress. Start again.'));
    session.pending = undefined; // state and verifier are single use
    // A payout waiting on a step-up is resumed by this callback or by none: a failed or abandoned sign-in drops it.
    const resume = session.resumePayout;
    session.resumePayout = undefined;
    const before = session.linked?.profileId;
    let linked: Awaited<ReturnType<typeof manager.completeAuthorization>>;
    try {
      linked = await manager.completeAuthorization(session.customerKey, request.url ?? '', pending);
    } catch (error) {
      // The step-up asked for a passkey (acr_values=phr) and the customer could not use one: no payout, and the shop says why.
      if (resume && error instanceof UnmetAuthenticationRequirements) {
        session.lastPayout = { ok: false, message: 'The payout needs a sign-in with a passkey, and you could not use one.' };
        return seeOther(response, '/account');
      }
      throw error;
    }
    session.linked = { userId: linked.userId, profileId: linked.profileId };
    session.lastRefresh = undefined;
    // Back from the step-up sign-in of the same customer: the payout it was for is sent again, once.
    // A sign-in as someone else ("Not you?") never pays from the account it switched to.
    if (resume && before === linked.profileId) return payout(response, session, true);
    return seeOther(response, '/account');
  }

  /**
   * Sends a payout with the customer's token. A step-up challenge (RFC
   * 9470) sends the customer through Connect with the `acr_values` and
   * `max_age` it names, and the payout is sent again from the callback; a
   * second challenge right after that sign-in is shown, not followed, so
   * the customer never loops.
   */
  async function payout(response: ServerResponse, session: Session, afterStepUp: boolean): Promise<void> {
    const answer = await manager.fetch(session.customerKey, options.payoutsUrl as string, {
      method: 'POST',
      headers: { accept: 'application/json' },
      signal: AbortSignal.timeout(5000),
    });
    const stepUp = await manager.stepUpAuthorization(session.customerKey, answer);
    if (stepUp && !afterStepUp) {
      await answer.body?.cancel();
      session.pending = { state: stepUp.authorization.state, codeVerifier: stepUp.authorization.codeVerifier };
      session.resumePayout = true;
      return seeOther(response, stepUp.authorization.url);
    }
    const body = (await answer.json().catch(() => undefined)) as { error?: string; error_description?: string } | undefined;
    if (answer.ok) session.lastPayout = { ok: true, body };
    else if (stepUp) {
      const needs = [stepUp.acrValues.length > 0 ? `a sign-in of kind ${stepUp.acrValues.join(' or ')}` : 'a new sign-in', stepUp.maxAge === undefined ? '' : ` within the last ${stepUp.maxAge} seconds`].join('');
      session.lastPayout = { ok: false, message: `The payout needs ${needs}, and your sign-in did not meet it.` };
    } else session.lastPayout = { ok: false, message: `HTTP ${answer.status}: ${body?.error ?? 'no JSON'} ${body?.error_description ?? ''}`.trim() };
    return seeOther(response, '/account');
  }

  async function account(response: ServerResponse, session: Session): Promise<void> {
    if (!session.linked) return seeOther(response, '/');
    // The profile first: the SDK presents the token (Bearer, or DPoP with a proof) and renews a refused one.
    const profile = await callProfile(manager, session.customerKey, profileUrl);
    const tokens = await manager.getTokens(session.customerKey);
    const view: AccountView = {
      linked: session.linked,
      token: summary(tokens),
      profile,
      lastRefresh: session.lastRefresh,
      payouts: options.payoutsUrl ? { last: session.lastPayout } : undefined,
    };
    return html(response, 200, accountPage(view));
  }

  return {
    manager,
    handle(request, response) {
      route(request, response).catch((error: unknown) => {
        const session = sessions.open(request, response);
        if (error instanceof ReauthorizationRequired) {
          // The SDK hands over a ready authorization: keep its state and verifier, offer the link.
          session.pending = { state: error.authorization.state, codeVerifier: error.authorization.codeVerifier };
          session.linked = undefined;
          return html(response, 200, relinkPage(error.authorization.url, error.description));
        }
        if (isConnectError(error)) {
          switch (error.error) {
            case 'access_denied':
              return html(response, 200, problemPage('Not linked', 'You cancelled the link. You can try again at any time.'));
            case 'state_mismatch':
            case 'issuer_mismatch':
            case 'invalid_callback':
              return html(response, 400, problemPage('This link cannot be completed', 'The answer did not match a link started here. Start again.'));
            default:
              return html(response, 502, problemPage('Connect could not help just now', `${error.name}: ${error.message}`));
          }
        }
        console.error(error);
        return html(response, 500, problemPage('Something went wrong', 'Please try again.', false));
      });
    },
  };
}

/** Starts the shop on `host:port` (port 0: a free one). */
export async function startConsumerApp(
  options: ConsumerAppOptions & { readonly host?: string; readonly port?: number },
): Promise<{ readonly url: string; readonly app: ConsumerApp; close(): Promise<void> }> {
  const app = createConsumerApp(options);
  const server = createServer((request, response) => app.handle(request, response));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 4000, options.host ?? '127.0.0.1', resolve);
  });
  const { address, port } = server.address() as AddressInfo;
  return {
    url: `http://${address}:${port}`,
    app,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The platform's protected profile API, called with the customer's access token (`CustomerTokenManager.fetch`). */
async function callProfile(manager: CustomerTokenManager, customerKey: string, profileUrl: string): Promise<AccountView['profile']> {
  try {
    const response = await manager.fetch(customerKey, profileUrl, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(5000) });
    const body = (await response.json().catch(() => undefined)) as { error?: string; error_description?: string } | undefined;
    if (response.ok) return { ok: true, body };
    return { ok: false, message: `HTTP ${response.status}: ${body?.error ?? 'no JSON'} ${body?.error_description ?? ''}`.trim() };
  } catch (error) {
    // The tokens' own trouble (a new authorization needed, Connect unreachable) is the page's to answer.
    if (isConnectError(error)) throw error;
    return { ok: false, message: `The profile API did not answer: ${(error as Error).message}` };
  }
}

/** A short, non-reversible name for a token, safe to show. */
function summary(tokens: CustomerTokens): TokenSummary {
  return { fingerprint: createHash('sha256').update(tokens.accessToken).digest('base64url').slice(0, 12), expiresAt: tokens.expiresAt };
}

function html(response: ServerResponse, status: number, body: string): void {
  response
    .writeHead(status, {
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self' http: https:; frame-ancestors 'none'",
    })
    .end(body);
}

function seeOther(response: ServerResponse, location: string): void {
  response.writeHead(303, { location, 'cache-control': 'no-store' }).end();
}
