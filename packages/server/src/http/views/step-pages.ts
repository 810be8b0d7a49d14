import type { MobileExample } from '../../core/customers/mobile.js';
import type { JourneyPage, JourneyView, Problem, StepResult } from '../../core/journey/outcomes.js';
import type { Language, ProblemPage } from './messages/index.js';
import { consentPage, loginPage, newPinPage, otpPage, passkeyOfferPage, passkeyRequiredPage, registerPage, resetPage, type PageError } from './pages.js';

/** A step's answer that is one of the journey's pages. */
export type StepPageResult = Extract<StepResult, { readonly journey: JourneyView }>;

/** What a step's page is rendered with, for the journey its result names. */
export interface StepPageContext {
  readonly language: Language;
  /** The CSRF token of the page's form, made when the form is. */
  csrfToken(): string;
  /** The address of a page of this journey. */
  pageUrl(page: JourneyPage): string;
  /** A problem as its page shows it (none: none). */
  error(problem: Problem | undefined, page: ProblemPage): PageError | undefined;
  /** The example number of the mobile fields' hint. */
  readonly mobileExample: MobileExample;
}

/** A page as rendered: its status, its HTML, and whether it loads the pages' script (views/scripts.ts). */
export interface RenderedPage {
  readonly status: number;
  readonly body: string;
  readonly script?: true;
}

type View<R extends StepPageResult> = (result: R, page: StepPageContext) => RenderedPage;

/** The result of kind `K`. */
type PageOf<K extends StepPageResult['kind']> = Extract<StepPageResult, { readonly kind: K }>;

const statusOf = (problem: Problem | undefined) => (problem ? 400 : 200);

/**
 * The login and registration pages; with user_id the mobile is fixed, and
 * there is no switching between the two. A journey that requires `phr`
 * shows no PIN form on either (`passkeyRequiredPage`).
 */
const signIn: View<PageOf<'login' | 'register'>> = (result, page) => {
  const { journey, problem } = result;
  const query = `?request=${encodeURIComponent(journey.requestId)}`;
  const passkeyActions = { optionsAction: `${PASSKEY_PATHS.options}${query}`, action: `${PASSKEY_PATHS.signIn}${query}` };
  if (journey.requiresPhr) {
    const body = passkeyRequiredPage({
      language: page.language,
      clientName: journey.clientName,
      action: page.pageUrl(result.kind),
      csrfToken: page.csrfToken(),
      error: page.error(problem, result.kind),
      // A new account has no passkey yet: the registration page offers none.
      passkey: result.kind === 'login' ? passkeyActions : undefined,
    });
    return result.kind === 'login' ? { status: statusOf(problem), body, script: true } : { status: statusOf(problem), body };
  }
  const fixed = journey.fixedMobile !== null;
  const form = {
    language: page.language,
    clientName: journey.clientName,
    csrfToken: page.csrfToken(),
    error: page.error(problem, result.kind),
    mobile: journey.fixedMobile ?? result.mobile,
    mobileReadonly: fixed,
    mobileExample: page.mobileExample,
  };
  const other = (to: 'login' | 'register') => (fixed ? undefined : page.pageUrl(to));
  if (result.kind === 'register') {
    return { status: statusOf(problem), body: registerPage({ ...form, action: page.pageUrl('register'), loginHref: other('login') }) };
  }
  const body = loginPage({
    ...form,
    action: page.pageUrl('login'),
    registerHref: other('register'),
    forgotHref: page.pageUrl('reset'),
    pinChanged: result.notice === 'pin_changed',
    passkey: { mode: result.passkey ?? 'offered', ...passkeyActions },
  });
  return { status: statusOf(problem), body, script: true };
};

/** "Forgot PIN?": as on the login page, with user_id the mobile is fixed. */
const reset: View<PageOf<'reset'>> = ({ journey, problem, mobile }, page) => ({
  status: statusOf(problem),
  body: resetPage({
    language: page.language,
    clientName: journey.clientName,
    action: page.pageUrl('reset'),
    csrfToken: page.csrfToken(),
    error: page.error(problem, 'reset'),
    mobile: journey.fixedMobile ?? mobile,
    mobileReadonly: journey.fixedMobile !== null,
    mobileExample: page.mobileExample,
    loginHref: page.pageUrl('login'),
  }),
});

/** A code's page (the sign-in's or the PIN reset's), with the resend countdown's script. */
const code: View<PageOf<'otp' | 'reset_otp'>> = (result, page) => {
  const { journey, problem } = result;
  const body = otpPage({
    language: page.language,
    clientName: journey.clientName,
    action: page.pageUrl(result.kind),
    csrfToken: page.csrfToken(),
    error: page.error(problem, result.kind),
    codeSent: result.notice === 'code_sent',
    reset: result.kind === 'reset_otp',
    ...result.otp,
  });
  return { status: statusOf(problem), body, script: true };
};

const newPin: View<PageOf<'new_pin'>> = ({ journey, problem, maskedMobile }, page) => ({
  status: statusOf(problem),
  body: newPinPage({
    language: page.language,
    clientName: journey.clientName,
    action: page.pageUrl('new_pin'),
    csrfToken: page.csrfToken(),
    error: page.error(problem, 'new_pin'),
    maskedMobile,
  }),
});

const consent: View<PageOf<'consent'>> = ({ journey, maskedMobile, scopes, otherAccount }, page) => ({
  status: 200,
  body: consentPage({
    language: page.language,
    clientName: journey.clientName,
    action: page.pageUrl('consent'),
    csrfToken: page.csrfToken(),
    maskedMobile,
    scopes,
    otherAccount,
  }),
});

/** The paths of the passkey requests (docs/journey.md, "Passkeys"). */
export const PASSKEY_PATHS = {
  options: '/login/passkey/options',
  signIn: '/login/passkey',
  enrol: '/login/passkey/enrol',
} as const;

/** The offer to add a passkey; its cookies are set by the route, as a redirect's would be. */
const passkeyOffer: View<PageOf<'passkey_offer'>> = ({ journey, maskedMobile, location }, page) => {
  const query = `?request=${encodeURIComponent(journey.requestId)}`;
  return {
    status: 200,
    script: true,
    body: passkeyOfferPage({
      language: page.language,
      clientName: journey.clientName,
      csrfToken: page.csrfToken(),
      maskedMobile,
      continueHref: location,
      optionsAction: `${PASSKEY_PATHS.options}${query}`,
      enrolAction: `${PASSKEY_PATHS.enrol}${query}`,
    }),
  };
};

/** The view of each page a step answers with. */
export const STEP_PAGES: { readonly [K in StepPageResult['kind']]: View<PageOf<K>> } = {
  login: signIn,
  register: signIn,
  reset,
  otp: code,
  reset_otp: code,
  new_pin: newPin,
  consent,
  passkey_offer: passkeyOffer,
};

/** Renders the page a step answered with. */
export function renderStepPage(result: StepPageResult, page: StepPageContext): RenderedPage {
  return (STEP_PAGES[result.kind] as View<StepPageResult>)(result, page);
}
