import { meetsRequirements, requirementsOf } from '../../authentication-requirements.js';
import { maskedMobile } from '../../customers/mobile.js';
import { atomically } from '../atomic.js';
import { cancelJourney } from '../cancel.js';
import { issueCode } from '../code.js';
import type { JourneyDeps } from '../deps.js';
import { deadEnd, isOpen, openJourney, pageForState, whereItStandsNow, type OpenJourney, type StepContext } from '../open.js';
import type { StepResult } from '../outcomes.js';
import { endSession, hashCookieValue, isPlausibleId } from '../session.js';
import { TRANSITIONS } from '../states.js';

import type { JourneyStep } from '../step.js';

/** What the consent step uses of the journey's dependencies. */
export type ConsentDeps = Pick<
  JourneyDeps,
  'db' | 'findClient' | 'clock' | 'lifetimes' | 'issuer'
>;

/** The consent form as posted: `action=approve`, `action=cancel` or `action=switch_account` ("Not you?"). */
export interface ConsentForm {
  readonly action?: string | undefined;
}

/**
 * `GET /consent`: the consent page, naming the client, the customer's
 * masked mobile and what approving grants (docs/hosted-login.md,
 * "Consent"): every scope the client is registered with, since an
 * approval lets the client sign the customer in silently with any of them
 * from then on.
 */
export async function showConsent(context: StepContext, deps: ConsentDeps): Promise<StepResult> {
  const journey = await openJourney(context, deps);
  if (!isOpen(journey)) return journey;
  if (journey.record.status !== 'consent_required' || journey.record.profileId === null) return pageForState(journey);
  const customer = await deps.db.customers.findCustomer(journey.record.profileId);
  if (!customer) return deadEnd('account_unavailable', journey.record, journey.view.clientName);
  const { scopes, scopeDescriptions } = journey.client;
  return {
    kind: 'consent',
    journey: journey.view,
    maskedMobile: maskedMobile(customer.mobile, 'page'),
    scopes: scopes.map((scope) => (Object.hasOwn(scopeDescriptions, scope) ? { scope, description: scopeDescriptions[scope] as string } : { scope })),
    otherAccount: journey.record.loginHint === null,
  };
}

type Approval = { readonly kind: 'done'; readonly location: string } | { readonly kind: 'login_required' } | { readonly kind: 'lost' };

/**
 * `POST /consent` (docs/journey.md, "Consent"). `approve`, in one transaction: the browser's session must
 * still be live and the journey's customer's, the journey moves
 * `consent_required` → `code_issued`, the approval is stored and the code is
 * issued. When the session ended meanwhile, or its sign-in no longer
 * meets the request's `acr_values` and `max_age` (docs/journey.md,
 * "`acr_values` and `max_age`"), the journey goes back to `pending` and
 * the customer logs in. `cancel`: `access_denied`.
 */
export async function submitConsent(context: StepContext, form: ConsentForm, deps: ConsentDeps): Promise<StepResult> {
  const journey = await openJourney(context, deps);
  if (!isOpen(journey)) return journey;
  if (form.action === 'cancel') return cancelJourney(journey, deps);
  const { record } = journey;
  if (form.action === 'switch_account' && record.status === 'consent_required' && record.loginHint === null) return switchAccount(journey, context, deps);
  if (record.status !== 'consent_required' || form.action !== 'approve') return pageForState(journey);
  const now = deps.clock.nowSeconds();

  const outcome = await atomically<Approval, Approval>(deps.db, async (tx, rollback) => {
    // The customer's row first, then the session's: the order `customers lock` takes them in, so the two never deadlock.
    const held = isPlausibleId(context.sessionId) && record.profileId !== null ? await tx.customers.holdCustomerForSignIn(record.profileId) : undefined;
    const session = held ? await tx.customerSessions.useCustomerSession(hashCookieValue(context.sessionId ?? ''), now, deps.lifetimes.sessionIdleSeconds) : undefined;
    const customer = session && session.profileId === held?.profileId ? held : undefined;
    // A session whose sign-in is too weak or too old for the request (acr_values, max_age) cannot approve either.
    if (!customer || !session || !meetsRequirements(session.authentication, requirementsOf(record), now)) {
      // Committed: the journey now needs a login.
      await tx.authorizationRequests.transitionAuthorizationRequest(record.idHash, TRANSITIONS.loginRequired, now, null);
      return { kind: 'login_required' };
    }
    if (!(await tx.authorizationRequests.transitionAuthorizationRequest(record.idHash, TRANSITIONS.approved, now))) return rollback({ kind: 'lost' });
    await tx.consents.insertConsent({ profileId: customer.profileId, clientId: record.clientId, approvedAt: now });
    // The code carries the session's sign-in (docs/tokens.md, "How the customer signed in"), not this approval.
    return { kind: 'done', location: await issueCode(record, customer, session.authentication, tx.codes, deps, journey.client) };
  });
  switch (outcome.kind) {
    case 'done':
      return { kind: 'redirect', location: outcome.location };
    case 'login_required':
      return { kind: 'goto', page: 'login', requestId: journey.requestId };
    case 'lost':
      return whereItStandsNow(journey, deps);
  }
}

/**
 * "Not you? Use another account" (docs/journey.md, "Consent"): in one
 * transaction the journey moves `consent_required` → `pending`, no longer
 * bound to the session's customer, and the browser's session ends (as
 * `prompt=login` ends it); then the login page of the same journey, where
 * anyone may sign in. Nothing is approved. When the journey moved
 * meanwhile (approved in another tab), nothing changes and the customer is
 * shown where it stands.
 */
async function switchAccount(journey: OpenJourney, context: StepContext, deps: ConsentDeps): Promise<StepResult> {
  const now = deps.clock.nowSeconds();
  const switched = await atomically<boolean, false>(deps.db, async (tx, rollback) => {
    if (!(await tx.authorizationRequests.transitionAuthorizationRequest(journey.record.idHash, TRANSITIONS.accountSwitched, now, null))) return rollback(false);
    await endSession(context.sessionId, tx, now);
    return true;
  });
  if (!switched) return whereItStandsNow(journey, deps);
  return { kind: 'goto', page: 'login', requestId: journey.requestId, endSession: true };
}

/** `/consent`: approve the client, cancel, or use another account. */
export const consentStep: JourneyStep<ConsentForm, ConsentDeps> = {
  page: 'consent',
  fields: { action: 'action' },
  show: showConsent,
  submit: submitConsent,
};
