import { randomBytes } from 'node:crypto';
import { meetsRequirements, requirementsOf } from '../authentication-requirements.js';
import { checkAuthorizationRequest, type AuthorizeQuery, type PageError, type ValidAuthorizationRequest } from '../authorize/authorization-request.js';
import { pushedParameters } from '../authorize/pushed-request.js';
import { buildErrorRedirect, type RedirectErrorCode } from '../authorize/redirect.js';
import { pickUiLocale } from '../authorize/ui-locales.js';
import type { ClientAddress } from '../client-address.js';
import { TooManyRequests } from '../errors.js';
import { AUTHORIZATION_REQUEST_TTL_SECONDS } from '../lifetimes.js';
import { issueCode } from './code.js';
import type { JourneyDeps } from './deps.js';
import type { StepResult } from './outcomes.js';
import { endSession, hashCookieValue, useSession } from './session.js';
import type { JourneyState } from './states.js';

/** The browser's cookies, as far as they matter at `/authorize`, and where the request came from. */
export interface BrowserCookies {
  /** The browser-binding cookie (always present: the route sets one when missing). */
  readonly browserId: string;
  /** The customer-session cookie, if any. */
  readonly sessionId: string | undefined;
  /** The client address, whose budget of journeys a new journey spends. */
  readonly address: ClientAddress;
}

/** What `GET /authorize` answers: a step result, or an error page when the client or its redirect URI cannot be trusted. */
export type StartResult = StepResult | PageError;

/**
 * `GET /authorize` (docs/journey.md): with `client_id` and `request_uri`,
 * takes the parameters of that pushed request (`pushedParameters`: used
 * once, by its own client, within 60 seconds; an error page otherwise);
 * checks the request, then
 * - `prompt=login` (and `max_age=0`) ends any customer session and asks
 *   for the PIN again (`prompt=none` with `max_age=0`: `login_required`,
 *   the session kept);
 * - a live session of the same customer (the same mobile as `user_id`, when
 *   given) whose sign-in meets the request's `acr_values` and `max_age`
 *   (docs/journey.md, "`acr_values` and `max_age`") returns a code at once
 *   if the customer approved this client, and asks for consent otherwise
 *   (`prompt=none`: `consent_required`);
 * - a session whose sign-in is too weak or too old for the request asks
 *   for a new sign-in, keeping the session until one completes
 *   (`prompt=none`: `login_required`);
 * - without such a session, `prompt=none` returns `login_required`;
 * - otherwise a journey starts `pending`, bound to this browser, on the login page.
 *
 * Every journey stored spends one of its client address's budget
 * (`CONNECT_JOURNEY_LIMIT_PER_ADDRESS`); past it the request is refused
 * with `TooManyRequests` (429) and nothing is written. A code returned at
 * once, or an error sent back, stores no journey and spends nothing.
 *
 * A journey keeps the language `ui_locales` chose for all its pages
 * (docs/hosted-login.md, "Languages").
 */
export async function startJourney(received: AuthorizeQuery, browser: BrowserCookies, deps: JourneyDeps): Promise<StartResult> {
  // With request_uri, the pushed parameters and nothing else (RFC 9126 §4); the pushed request is used up here.
  const parameters = await pushedParameters(received, deps);
  if (parameters.kind === 'page_error') return parameters;
  const { query, pushed } = parameters;
  const check = await checkAuthorizationRequest(query, { ...deps, pushed });
  if (check.kind === 'page_error') return check;
  const back = (error: RedirectErrorCode, description: string, state: string | null, redirectUri: string): StepResult => ({
    kind: 'redirect',
    location: buildErrorRedirect(redirectUri, error, description, state, deps.issuer),
  });
  if (check.kind === 'redirect_error') return back(check.error, check.description, check.state, check.redirectUri);
  const { request } = check;
  const now = deps.clock.nowSeconds();

  // max_age=0: no sign-in is recent enough, so the session ends as with prompt=login;
  // with prompt=none there is no sign-in to make, and the answer ends nothing.
  if (request.prompt === 'none' && request.maxAge === 0) return back('login_required', 'the customer must sign in again to meet max_age', request.state, request.redirectUri);
  const forceLogin = request.prompt === 'login' || request.maxAge === 0;
  if (forceLogin) await endSession(browser.sessionId, deps.db, now);
  const signedIn = forceLogin ? undefined : await useSession(browser.sessionId, deps);
  const customer = signedIn?.customer;
  const sameCustomer = signedIn && customer && (request.loginHint === null || customer.mobile === request.loginHint);
  if (sameCustomer && !meetsRequirements(signedIn.authentication, requirementsOf(request), now)) {
    // Too weak (acr_values) or too old (max_age): a new sign-in, which replaces the session once it completes.
    if (request.prompt === 'none') return back('login_required', 'the customer must sign in again to meet acr_values or max_age', request.state, request.redirectUri);
    return begin(request, browser, { status: 'pending', profileId: null, endSession: false, query }, deps);
  }
  if (sameCustomer) {
    if (await deps.db.consents.findConsent(customer.profileId, request.client.id)) {
      // A silent sign-in: the code carries the session's sign-in (its auth_time, amr, acr), not this moment.
      const location = await issueCode(codeRequest(request), customer, signedIn.authentication, deps.db.codes, deps, request.client);
      return { kind: 'redirect', location };
    }
    if (request.prompt === 'none') return back('consent_required', 'the customer has not approved this client', request.state, request.redirectUri);
    return begin(request, browser, { status: 'consent_required', profileId: customer.profileId, endSession: false, query }, deps);
  }
  if (request.prompt === 'none') return back('login_required', 'the customer must log in', request.state, request.redirectUri);
  return begin(request, browser, { status: 'pending', profileId: null, endSession: forceLogin, query }, deps);
}

/** Stores a new journey bound to this browser and sends the customer to its first page. */
async function begin(
  request: ValidAuthorizationRequest,
  browser: BrowserCookies,
  start: { status: JourneyState; profileId: string | null; endSession: boolean; query: AuthorizeQuery },
  deps: JourneyDeps,
): Promise<StepResult> {
  const { status, profileId } = start;
  // The budget is taken before the row is written; a spent one (or counters
  // that cannot be reached: StorageUnavailable) writes nothing.
  const limited = await deps.journeyStarts.take(browser.address);
  if (limited) throw new TooManyRequests('too many sign-ins were started from this address; try again later', limited.retryAfterSeconds);
  const requestId = randomBytes(32).toString('base64url');
  const now = deps.clock.nowSeconds();
  await deps.db.authorizationRequests.insertAuthorizationRequest({
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
    status,
    profileId,
    uiLocale: pickUiLocale(start.query.ui_locales),
    scopes: request.scopes,
    endedBy: null,
    acrValues: request.acrValues,
    maxAge: request.maxAge,
    ...(request.dpopJkt ? { dpopJkt: request.dpopJkt } : {}),
  });
  return { kind: 'goto', page: status === 'consent_required' ? 'consent' : 'login', requestId, endSession: start.endSession };
}

function codeRequest(request: ValidAuthorizationRequest) {
  return { clientId: request.client.id, redirectUri: request.redirectUri, state: request.state, codeChallenge: request.codeChallenge, scopes: request.scopes, ...(request.dpopJkt ? { dpopJkt: request.dpopJkt } : {}) };
}
