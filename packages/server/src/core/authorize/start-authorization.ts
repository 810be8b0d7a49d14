import { randomBytes } from 'node:crypto';
import type { Client } from '../clients/client.js';
import type { Clock } from '../clock.js';
import { endCustomerSession, findSessionCustomer, hashCookieValue, type CustomerSessionDeps } from '../login/customer-session.js';
import type { AuthorizationRequestStore } from '../journey/stores.js';
import { checkAuthorizationRequest, type AuthorizeQuery } from './authorization-request.js';
import { errorRedirect, issueCodeRedirect, type IssueCodeDeps } from './issue-code.js';

/** How long a customer has to finish logging in once `/authorize` sent them to the login page. */
export const AUTHORIZATION_REQUEST_TTL_SECONDS = 15 * 60;

/** What starting an authorization needs. */
export interface StartAuthorizationDeps extends IssueCodeDeps, CustomerSessionDeps {
  findClient(id: string): Promise<Client | undefined>;
  readonly requests: Pick<AuthorizationRequestStore, 'insertAuthorizationRequest'>;
  readonly clock: Clock;
}

/** The browser's cookies, as far as they matter here. */
export interface BrowserContext {
  /** The browser-binding cookie (always present: the route sets one when missing). */
  readonly browserId: string;
  /** The customer-session cookie, if any. */
  readonly sessionId: string | undefined;
}

/** What `GET /authorize` answers. */
export type StartAuthorizationResult =
  /** Client or redirect URI not verified: an error page, never a redirect. */
  | { readonly kind: 'page_error'; readonly message: string }
  /** Back to the client: an error, or a code straight from a live session. */
  | { readonly kind: 'redirect'; readonly location: string; readonly endSession: boolean }
  /** On to the hosted login (or registration) page. */
  | { readonly kind: 'login'; readonly requestId: string; readonly endSession: boolean };

/**
 * `GET /authorize` (CONTRACT.md §6): checks the request; `prompt=login` ends
 * any customer session; a live session of the same customer (same mobile as
 * `user_id`, when given) and no `prompt` returns a code at once;
 * `prompt=none` without one returns `login_required`; otherwise the request is
 * stored, bound to this browser, and the customer goes to the login page.
 */
export async function startAuthorization(
  query: AuthorizeQuery,
  browser: BrowserContext,
  deps: StartAuthorizationDeps,
): Promise<StartAuthorizationResult> {
  const check = await checkAuthorizationRequest(query, deps);
  if (check.kind === 'page_error') return check;
  if (check.kind === 'redirect_error') {
    return { kind: 'redirect', location: errorRedirect(check.redirectUri, check.error, check.description, check.state, deps.issuer), endSession: false };
  }
  const { request } = check;
  const endSession = request.prompt === 'login';
  if (endSession) await endCustomerSession(browser.sessionId, deps);

  const customer = endSession ? undefined : await findSessionCustomer(browser.sessionId, deps);
  const sameCustomer = customer && (request.loginHint === null || customer.mobile === request.loginHint);
  if (customer && sameCustomer) {
    const codeRequest = { clientId: request.client.id, redirectUri: request.redirectUri, state: request.state, codeChallenge: request.codeChallenge };
    return { kind: 'redirect', location: await issueCodeRedirect(codeRequest, customer, deps), endSession: false };
  }
  if (request.prompt === 'none') {
    const location = errorRedirect(request.redirectUri, 'login_required', 'the customer must log in', request.state, deps.issuer);
    return { kind: 'redirect', location, endSession: false };
  }

  const requestId = randomBytes(32).toString('base64url');
  const now = deps.clock.nowSeconds();
  await deps.requests.insertAuthorizationRequest({
    idHash: hashCookieValue(requestId),
    clientId: request.client.id,
    redirectUri: request.redirectUri,
    state: request.state,
    codeChallenge: request.codeChallenge,
    loginHint: request.loginHint,
    browserHash: hashCookieValue(browser.browserId),
    createdAt: now,
    expiresAt: now + AUTHORIZATION_REQUEST_TTL_SECONDS,
    completedAt: null,
  });
  return { kind: 'login', requestId, endSession };
}
