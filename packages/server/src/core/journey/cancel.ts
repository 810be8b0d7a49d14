import { buildErrorRedirect } from '../authorize/redirect.js';
import type { JourneyDeps } from './deps.js';
import { whereItStandsNow, type OpenJourney } from './open.js';
import type { StepResult } from './outcomes.js';
import { TRANSITIONS } from './states.js';

/**
 * The customer cancels (any page's `action=cancel`): the journey ends
 * `cancelled` and the browser goes back to the client with `access_denied`
 * (RFC 6749 §4.1.2.1). A journey that ended meanwhile (the code was issued
 * in another tab) is not cancelled after the fact.
 */
export async function cancelJourney(journey: OpenJourney, deps: Pick<JourneyDeps, 'db' | 'clock' | 'issuer'>): Promise<StepResult> {
  const moved = await deps.db.authorizationRequests.transitionAuthorizationRequest(journey.record.idHash, TRANSITIONS.cancelled, deps.clock.nowSeconds());
  // Every open state may be cancelled: the journey ended or expired since it was opened.
  if (!moved) return whereItStandsNow(journey, deps);
  const { record } = journey;
  return { kind: 'redirect', location: buildErrorRedirect(record.redirectUri, 'access_denied', 'the customer cancelled', record.state, deps.issuer) };
}

/**
 * The sign-in cannot meet the request's `acr_values` (docs/journey.md,
 * "`acr_values` and `max_age`"): the customer has no passkey to use ("I
 * can't use a passkey"), or a PIN + SMS sign-in was attempted on a journey
 * that requires `phr`. The journey ends `cancelled` and the browser goes
 * back to the client with `unmet_authentication_requirements` (OpenID
 * Connect Core Unmet Authentication Requirements 1.0), `state` and `iss`.
 * A journey that ended meanwhile is shown where it stands.
 */
export async function endJourneyUnmet(journey: OpenJourney, deps: Pick<JourneyDeps, 'db' | 'clock' | 'issuer'>): Promise<StepResult> {
  const moved = await deps.db.authorizationRequests.transitionAuthorizationRequest(journey.record.idHash, TRANSITIONS.cancelled, deps.clock.nowSeconds());
  if (!moved) return whereItStandsNow(journey, deps);
  const { record } = journey;
  return {
    kind: 'redirect',
    location: buildErrorRedirect(record.redirectUri, 'unmet_authentication_requirements', 'the customer cannot sign in as acr_values requires', record.state, deps.issuer),
  };
}
