/**
 * Passkeys on the hosted pages (docs/journey.md, "Passkeys"): the options
 * of a ceremony, a sign-in with a passkey, and the enrolment of a new one
 * right after a sign-in. Every answer is JSON for the page's script; no
 * answer says more than the customer may know (one refusal for every
 * reason; the audit log says which).
 *
 * A challenge is single use and bound to its journey: it is read from the
 * answer's `clientDataJSON`, consumed in one conditional update (only the
 * first of any number of concurrent answers gets it), and only then is the
 * answer verified against it.
 */
import { auditActor } from '../audit/audit-actor.js';
import type { AuditEventType } from '../audit/audit-log.js';
import { passkeyAuthentication, ACR_PHR } from '../authentication.js';
import { meetsRequirements, requirementsOf } from '../authentication-requirements.js';
import { maskedMobile, mobileOf } from '../customers/mobile.js';
import {
  challengeOf,
  enrolmentOptions,
  newChallengeBytes,
  parseAuthenticationResponse,
  parseRegistrationResponse,
  signInOptions,
  verifyAssertion,
  verifyRegistration,
  type RelyingParty,
} from '../passkeys/ceremonies.js';
import { hashWebAuthnChallenge, isPasskeyHeld, newUserHandle, passkeyHeldUntil, usablePasskeysOf, WEBAUTHN_CHALLENGE_TTL_SECONDS } from '../passkeys/passkeys.js';
import type { PasskeyRecord, WebAuthnPurpose } from '../passkeys/records.js';
import { endJourneyUnmet } from './cancel.js';
import { newCode } from './code.js';
import type { JourneyDeps } from './deps.js';
import { proveKnownDevice } from './known-device.js';
import { isOpen, openJourney, pageForState, whereItStandsNow, type OpenJourney, type StepContext } from './open.js';
import type { StepResult } from './outcomes.js';
import type { AuthorizationRequestRecord, CustomerSessionRecord } from './records.js';
import { hashCookieValue, isPlausibleId, newSession } from './session.js';
import { canMove, TRANSITIONS } from './states.js';

/** What the passkey answers use of the journey's dependencies. */
export type PasskeyDeps = Pick<
  JourneyDeps,
  'db' | 'findClient' | 'clock' | 'lifetimes' | 'issuer' | 'pinAttempts' | 'journeyStarts' | 'knownDeviceKey' | 'audit' | 'webauthn' | 'countSignIn'
>;

/** The error codes of the passkey answers (docs/journey.md, "Passkeys"). */
export type PasskeyErrorCode = 'passkey_refused' | 'passkey_expired' | 'account_unavailable' | 'too_many_attempts' | 'journey_ended';

/** What a passkey request answers, for the HTTP layer to send as JSON. */
export type PasskeyAnswer =
  /** The options for `startAuthentication()` / `startRegistration()`, as @simplewebauthn/server made them. */
  | { readonly kind: 'options'; readonly options: object }
  /** Signed in: where the browser goes next, and the cookies a PIN + SMS sign-in sets. */
  | { readonly kind: 'signed_in'; readonly location: string; readonly session: string; readonly knownDevice: string }
  /** The passkey was added. */
  | { readonly kind: 'added' }
  /**
   * Refused. `journey_ended`: where the journey stands now (`at`), as a
   * step result (a page of the journey, or a dead end).
   */
  | {
      readonly kind: 'refused';
      readonly error: PasskeyErrorCode;
      readonly retryAfterSeconds?: number;
      readonly at?: StepResult;
      /** The journey's language, when it chose one. */
      readonly uiLocale?: OpenJourney['record']['uiLocale'];
    };

/** What the options request is for: signing in, or adding a passkey after a sign-in. */
export type PasskeyPurpose = 'sign_in' | 'enrol';

/** Why a passkey was refused, as the audit log records it. */
type RefusalReason =
  | 'malformed'
  | 'challenge'
  | 'unknown_credential'
  | 'suspended'
  | 'wrong_customer'
  | 'user_handle'
  | 'origin'
  | 'rp_id'
  | 'user_verification'
  | 'signature'
  | 'counter'
  | 'type'
  | 'other'
  | 'exists'
  | 'customer_unavailable'
  /** A valid passkey whose sign-in does not meet the request's `acr_values` (a held passkey for `phr`). */
  | 'unmet_requirements';

/** The relying party as the ceremonies check it. */
function relyingParty(deps: Pick<JourneyDeps, 'webauthn'>): RelyingParty {
  return { rpId: deps.webauthn.rpId, origins: deps.webauthn.origins };
}

function refused(error: PasskeyErrorCode, journey?: { record: Pick<AuthorizationRequestRecord, 'uiLocale'> }, extra: { retryAfterSeconds?: number; at?: StepResult } = {}): PasskeyAnswer {
  const uiLocale = journey?.record.uiLocale ?? null;
  return { kind: 'refused', error, ...extra, ...(uiLocale === null ? {} : { uiLocale }) };
}

/** `journey_ended` for a step result that is not an open journey. */
function ended(at: StepResult, journey?: OpenJourney): PasskeyAnswer {
  return refused('journey_ended', journey, { at });
}

/**
 * `POST /login/passkey/options`: the options of a sign-in (the journey open
 * for login) or of an enrolment (right after this browser's sign-in in this
 * journey), each with a new challenge stored for this journey. Each stored
 * challenge takes one from the address's budget of journeys
 * (`CONNECT_JOURNEY_LIMIT_PER_ADDRESS`), as the journey it belongs to did:
 * past it `too_many_attempts` with `retry_after`, and nothing is stored.
 */
export async function passkeyOptions(context: StepContext, purpose: string | undefined, deps: PasskeyDeps): Promise<PasskeyAnswer> {
  if (purpose === 'enrol') return enrolOptions(context, deps);
  const journey = await openJourney(context, deps);
  if (!isOpen(journey)) return ended(journey);
  if (!canMove(journey.record.status, TRANSITIONS.passkeyVerified)) return ended(pageForState(journey), journey);
  if (purpose !== 'sign_in') return refused('passkey_refused', journey);
  // A journey whose client named the mobile offers that customer's passkeys; otherwise any (discoverable).
  const named = journey.record.loginHint === null ? undefined : await deps.db.customers.findCustomerByMobile(journey.record.loginHint);
  const allow = named ? await usablePasskeysOf(deps.db.passkeys, named.profileId) : [];
  const limited = await deps.journeyStarts.take(context.address);
  if (limited) return refused('too_many_attempts', journey, limited);
  const challenge = newChallengeBytes();
  await storeChallenge(journey.record.idHash, 'authenticate', named?.profileId ?? null, challenge, deps);
  return { kind: 'options', options: await signInOptions(relyingParty(deps), challenge, allow) };
}

async function storeChallenge(idHash: string, purpose: WebAuthnPurpose, profileId: string | null, challenge: Uint8Array<ArrayBuffer>, deps: Pick<JourneyDeps, 'db' | 'clock'>) {
  const now = deps.clock.nowSeconds();
  await deps.db.passkeys.insertWebAuthnChallenge({
    challengeHash: hashWebAuthnChallenge(Buffer.from(challenge).toString('base64url')),
    requestHash: idHash,
    purpose,
    profileId,
    createdAt: now,
    expiresAt: now + WEBAUTHN_CHALLENGE_TTL_SECONDS,
    consumedAt: null,
  });
}

/**
 * `POST /login/passkey`: a sign-in with a passkey. Counted first against
 * the address's budget of failed PIN checks, given back when it signs in;
 * never against the mobile's budget of wrong one-time PINs (a forged answer
 * guesses nothing, and anyone who knows a mobile can post one:
 * docs/journey.md, "A stranger cannot lock the owner out"). The challenge
 * is consumed, the answer verified, the passkey's counter
 * advanced (one conditional update), and then the sign-in completes in ONE
 * atomic step, as a right one-time PIN's does (`SignInStore.signInWithPasskey`).
 */
export async function signInWithPasskey(context: StepContext, posted: string | undefined, deps: PasskeyDeps): Promise<PasskeyAnswer> {
  const journey = await openJourney(context, deps);
  if (!isOpen(journey)) return ended(journey);
  if (!canMove(journey.record.status, TRANSITIONS.passkeyVerified)) return ended(pageForState(journey), journey);
  const limited = await deps.pinAttempts.take(context.address);
  if (limited) return refused('too_many_attempts', journey, { retryAfterSeconds: limited.retryAfterSeconds });

  const outcome = await attempt(journey, posted, context, deps);
  if (outcome.kind === 'signed_in') {
    await deps.pinAttempts.giveBack(context.address);
    return outcome;
  }
  if (outcome.kind === 'refused' && outcome.error !== 'passkey_refused' && outcome.error !== 'passkey_expired') {
    // Not a refused passkey (the journey moved on, the account is locked): it does not count.
    await deps.pinAttempts.giveBack(context.address);
  }
  return outcome;
}

async function attempt(journey: OpenJourney, posted: string | undefined, context: StepContext, deps: PasskeyDeps): Promise<PasskeyAnswer> {
  const refuse = async (reason: RefusalReason, passkey?: Pick<PasskeyRecord, 'credentialId' | 'profileId'>, error: PasskeyErrorCode = 'passkey_refused') => {
    await audit('customer.passkey_refused', journey, context, deps, passkey?.profileId ?? null, 'failure', { reason, purpose: 'sign_in', ...(passkey ? { credential_id: passkey.credentialId } : {}) });
    return refused(error, journey);
  };
  const response = parseAuthenticationResponse(posted);
  const challenge = response && challengeOf(response);
  if (!response || !challenge) return refuse('malformed');
  const now = deps.clock.nowSeconds();
  const consumed = await deps.db.passkeys.consumeWebAuthnChallenge(hashWebAuthnChallenge(challenge), { requestHash: journey.record.idHash, purpose: 'authenticate', now });
  if (!consumed) return refuse('challenge', undefined, 'passkey_expired');

  const passkey = await deps.db.passkeys.findPasskey(response.id);
  if (!passkey) return refuse('unknown_credential');
  if (passkey.suspendedAt !== null) return refuse('suspended', passkey);
  // A journey for a named customer (its `user_id`, or the challenge's) signs in that customer only.
  const named = journey.record.loginHint === null ? undefined : await deps.db.customers.findCustomerByMobile(journey.record.loginHint);
  if ((journey.record.loginHint !== null && named?.profileId !== passkey.profileId) || (consumed.profileId !== null && consumed.profileId !== passkey.profileId)) {
    return refuse('wrong_customer', passkey);
  }
  const userHandle = response.response.userHandle;
  if (userHandle !== undefined && userHandle !== null && userHandle !== passkey.userHandle) return refuse('user_handle', passkey);
  const customer = named ?? (await deps.db.customers.findCustomer(passkey.profileId));
  if (!customer || customer.status !== 'active') {
    await audit('customer.passkey_refused', journey, context, deps, passkey.profileId, 'failure', { reason: 'customer_unavailable', purpose: 'sign_in', credential_id: passkey.credentialId });
    return refused('account_unavailable', journey);
  }

  const verified = await verifyAssertion(relyingParty(deps), response, challenge, passkey);
  if (!verified.ok) return refuse(verified.reason, passkey);
  // The counter advances (or both are 0), in one conditional update: a replayed or cloned answer does not.
  if (!(await deps.db.passkeys.recordPasskeyUse(passkey.credentialId, { signCount: verified.assertion.newCounter, now }))) return refuse('counter', passkey);

  const authentication = passkeyAuthentication(now, { backupEligible: verified.assertion.backupEligible, held: isPasskeyHeld(passkey, now) });
  // A request for phr is met only by a passkey out of its hold (docs/journey.md, "`acr_values` and `max_age`"):
  // a held one ends the journey with unmet_authentication_requirements, and nothing is signed in.
  if (!meetsRequirements(authentication, requirementsOf(journey.record), now)) {
    await audit('customer.passkey_refused', journey, context, deps, customer.profileId, 'failure', { reason: 'unmet_requirements', purpose: 'sign_in', credential_id: passkey.credentialId, acr: authentication.acr });
    return ended(await endJourneyUnmet(journey, deps), journey);
  }
  const session = newSession(customer.profileId, authentication, now, deps.lifetimes);
  const issued = newCode(journey.record, customer, authentication, deps, journey.client);
  const done = await deps.db.signIns.signInWithPasskey({
    idHash: journey.record.idHash,
    now,
    profileId: customer.profileId,
    credentialId: passkey.credentialId,
    endSessionHash: isPlausibleId(context.sessionId) ? hashCookieValue(context.sessionId) : null,
    session: session.record,
    consent: { profileId: customer.profileId, clientId: journey.record.clientId, approvedAt: now },
    code: issued.record,
  });
  switch (done.kind) {
    case 'lost':
      return ended(await whereItStandsNow(journey, deps), journey);
    case 'customer_unavailable':
      await audit('customer.passkey_refused', journey, context, deps, passkey.profileId, 'failure', { reason: 'customer_unavailable', purpose: 'sign_in', credential_id: passkey.credentialId });
      return refused('account_unavailable', journey);
    case 'completed':
      break;
  }
  deps.countSignIn?.('passkey');
  await audit('customer.passkey_used', journey, context, deps, customer.profileId, 'success', { credential_id: passkey.credentialId, acr: authentication.acr });
  return {
    kind: 'signed_in',
    location: issued.location,
    session: session.id,
    knownDevice: proveKnownDevice(context.knownDevice, { profileId: customer.profileId, credentialVersion: done.credentialVersion }, now, deps.knownDeviceKey),
  };
}

/**
 * The customer session this browser's sign-in created in this journey,
 * when the journey just completed with it: `code_issued`, the browser's
 * session cookie the session whose start completed the journey, within
 * the code's lifetime of it, of the customer the journey signed in (a
 * registration's new account included: another customer's sign-in in the
 * same second and browser does not stand in for it), its customer still
 * active. Otherwise where the journey stands (a refusal).
 */
async function justSignedIn(
  context: StepContext,
  deps: PasskeyDeps,
): Promise<{ journey: { record: AuthorizationRequestRecord }; session: CustomerSessionRecord; mobile: string } | PasskeyAnswer> {
  const { requestId, browserId, sessionId } = context;
  if (!isPlausibleId(requestId) || !isPlausibleId(browserId)) return ended({ kind: 'dead_end', reason: 'expired' });
  const found = await deps.db.signIns.findJourney(hashCookieValue(requestId));
  const record = found?.request;
  if (!record || record.browserHash !== hashCookieValue(browserId)) return ended({ kind: 'dead_end', reason: 'expired' });
  const journey = { record };
  const now = deps.clock.nowSeconds();
  const finished: StepResult = { kind: 'dead_end', reason: 'finished', ...(record.uiLocale === null ? {} : { uiLocale: record.uiLocale }) };
  if (record.status !== 'code_issued' || record.completedAt === null || now >= record.completedAt + deps.lifetimes.codeSeconds) return refused('journey_ended', journey, { at: finished });
  if (!isPlausibleId(sessionId)) return refused('journey_ended', journey, { at: finished });
  const session = await deps.db.customerSessions.findCustomerSession(hashCookieValue(sessionId));
  if (!session || session.endedAt !== null || session.expiresAt <= now || session.createdAt !== record.completedAt || record.profileId !== session.profileId) {
    return refused('journey_ended', journey, { at: finished });
  }
  const customer = await deps.db.customers.findCustomer(session.profileId);
  if (!customer || customer.status !== 'active') return refused('account_unavailable', journey);
  return { journey, session, mobile: customer.mobile };
}

async function enrolOptions(context: StepContext, deps: PasskeyDeps): Promise<PasskeyAnswer> {
  const signedIn = await justSignedIn(context, deps);
  if ('kind' in signedIn) return signedIn;
  const { journey, session, mobile } = signedIn;
  // The customer's user handle, set once (of concurrent enrolments, the first one's is kept).
  const handle = await deps.db.passkeys.claimUserHandle(session.profileId, newUserHandle());
  if (handle === undefined) return refused('account_unavailable', journey);
  const existing = await deps.db.passkeys.listPasskeysOf(session.profileId);
  const limited = await deps.journeyStarts.take(context.address);
  if (limited) return refused('too_many_attempts', journey, limited);
  const challenge = newChallengeBytes();
  await storeChallenge(journey.record.idHash, 'register', session.profileId, challenge, deps);
  const name = maskedMobile(mobileOf({ mobile }) ?? mobile, 'page');
  return { kind: 'options', options: await enrolmentOptions(relyingParty(deps), challenge, { handle, name }, existing) };
}

/**
 * `POST /login/passkey/enrol`: adds the passkey the browser made, right
 * after this browser's sign-in in this journey. The challenge is consumed,
 * the answer verified, and the passkey stored only while its customer is
 * active (one statement); a credential already stored is refused. It is
 * held (`passkeyHeldUntil`) unless the sign-in used a passkey out of its hold.
 */
export async function enrolPasskey(context: StepContext, posted: string | undefined, deps: PasskeyDeps): Promise<PasskeyAnswer> {
  const signedIn = await justSignedIn(context, deps);
  if ('kind' in signedIn) return signedIn;
  const { journey, session } = signedIn;
  const refuse = async (reason: RefusalReason, error: PasskeyErrorCode = 'passkey_refused', credentialId?: string) => {
    await audit('customer.passkey_refused', journey, context, deps, session.profileId, 'failure', { reason, purpose: 'enrol', ...(credentialId ? { credential_id: credentialId } : {}) });
    return refused(error, journey);
  };
  const response = parseRegistrationResponse(posted);
  const challenge = response && challengeOf(response);
  if (!response || !challenge) return refuse('malformed');
  const now = deps.clock.nowSeconds();
  const consumed = await deps.db.passkeys.consumeWebAuthnChallenge(hashWebAuthnChallenge(challenge), { requestHash: journey.record.idHash, purpose: 'register', now });
  if (!consumed) return refuse('challenge', 'passkey_expired');
  if (consumed.profileId !== session.profileId) return refuse('wrong_customer');
  const verified = await verifyRegistration(relyingParty(deps), response, challenge);
  if (!verified.ok) return refuse(verified.reason);
  const { registration } = verified;
  const handle = await deps.db.passkeys.findUserHandleOf(session.profileId);
  if (handle === undefined) return refuse('customer_unavailable', 'account_unavailable', registration.credentialId);
  const heldUntil = passkeyHeldUntil(now, deps.webauthn.holdSeconds, await signedInWith(session, deps));
  const added = await deps.db.passkeys.insertPasskeyOfActiveCustomer({
    credentialId: registration.credentialId,
    profileId: session.profileId,
    userHandle: handle,
    publicKey: registration.publicKey,
    signCount: registration.signCount,
    transports: registration.transports,
    aaguid: registration.aaguid,
    name: null,
    createdAt: now,
    lastUsedAt: null,
    heldUntil,
    suspendedAt: null,
  });
  if (added === 'exists') return refuse('exists', 'passkey_refused', registration.credentialId);
  if (added === 'customer_unavailable') return refuse('customer_unavailable', 'account_unavailable', registration.credentialId);
  await audit('customer.passkey_added', journey, context, deps, session.profileId, 'success', { credential_id: registration.credentialId, held_until: heldUntil });
  return { kind: 'added' };
}

/**
 * The passkey the session's sign-in used, as `passkeyHeldUntil` needs it:
 * `null` for a PIN + SMS sign-in; not held for one whose `acr` was `phr`;
 * for a held passkey's, the longest hold of the customer's passkeys (the
 * one it used among them), so that no hold is cut short.
 */
async function signedInWith(session: CustomerSessionRecord, deps: Pick<JourneyDeps, 'db'>): Promise<{ heldUntil: number | null } | null> {
  const amr = session.authentication?.amr ?? [];
  if (!amr.includes('hwk') && !amr.includes('swk')) return null;
  if (session.authentication?.acr === ACR_PHR) return { heldUntil: null };
  const holds = (await deps.db.passkeys.listPasskeysOf(session.profileId)).map((p) => p.heldUntil ?? 0);
  const longest = Math.max(0, ...holds);
  return { heldUntil: longest === 0 ? null : longest };
}

async function audit(
  type: AuditEventType,
  journey: { record: Pick<AuthorizationRequestRecord, 'clientId'> },
  context: StepContext,
  deps: Pick<JourneyDeps, 'audit'>,
  subject: string | null,
  outcome: 'success' | 'failure',
  details: Record<string, string | number | null>,
): Promise<void> {
  await deps.audit.record({
    type,
    actor: auditActor({ kind: 'address', ip: context.address.ip }),
    subject,
    outcome,
    details: { client_id: journey.record.clientId, ...details },
    requestId: context.correlationId,
  });
}
