import fastifyCookie from '@fastify/cookie';
import fastifyCsrf from '@fastify/csrf-protection';
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AuthorizeQuery } from '../../core/authorize/authorization-request.js';
import { mobileExample as mobileExampleOf } from '../../core/customers/mobile.js';
import type { Environment } from '../../core/environment.js';
import { showConsent, submitConsent } from '../../core/journey/consent.js';
import type { JourneyDeps } from '../../core/journey/deps.js';
import { showReset, showResetOtp, submitReset, submitResetOtp } from '../../core/journey/forgot-pin.js';
import { showNewPin, submitNewPin } from '../../core/journey/new-pin.js';
import { showOtp, submitOtp } from '../../core/journey/one-time-pin.js';
import type { StepContext } from '../../core/journey/open.js';
import type { JourneyPage, Problem, StepResult } from '../../core/journey/outcomes.js';
import { showLogin, showRegistration, submitLogin, submitRegistration } from '../../core/journey/sign-in.js';
import { isPlausibleId } from '../../core/journey/session.js';
import { KNOWN_DEVICE_TTL_SECONDS } from '../../core/journey/known-device.js';
import { startJourney } from '../../core/journey/start.js';
import { maskedRedirectUri } from '../../core/authorize/redirect.js';
import { clientAddressOf } from '../plugins/client-address.js';
import { useFormBody, type FormParams } from '../plugins/form-body.js';
import { acceptedLocale, cookiePolicy, pageLanguage, requestLanguage, seeOther, sendErrorPage, sendPage, type PageLanguage } from '../plugins/hosted-pages.js';
import { requestSignal } from '../plugins/request-deadline.js';
import { fill, html as safeHtml, type SafeHtml } from '../views/html.js';
import { limitNote } from '../views/limit-notes.js';
import { problemMessage, type ProblemPage } from '../views/messages/index.js';
import { consentPage, loginPage, newPinPage, otpPage, redirectMismatchNote, registerPage, resetPage, type PageError } from '../views/pages.js';

/** What the customer's pages need. */
export interface JourneyRouteDeps {
  readonly journey: JourneyDeps;
  readonly environment: Environment;
  /** Key binding CSRF tokens to the browser cookie. */
  readonly csrfKey: Uint8Array;
  readonly sessionTtlSeconds: number;
  /** The public auth URL: the known-device cookie is `Secure` when it is `https://`. */
  readonly authUrl?: string | undefined;
  /** Counts what each submitted step came to (metrics). */
  readonly countStep?: (step: JourneyPage, result: StepResult) => void;
}

/** A parameter given twice arrives as an array. */
type PageRoute = { Querystring: { request?: string | string[] } };
type FormRoute = PageRoute & { Body: FormParams | undefined };

const PATHS: Record<JourneyPage, string> = {
  login: '/login',
  register: '/register',
  otp: '/login/otp',
  consent: '/consent',
  reset: '/login/reset',
  reset_otp: '/login/reset/otp',
  new_pin: '/login/reset/pin',
};

/**
 * The customer's journey over HTTP (docs/journey.md): `GET /authorize`, and
 * the hosted pages `/login`, `/register`, `/login/otp`, `/consent` and the
 * "Forgot PIN?" pages `/login/reset`, `/login/reset/otp`, `/login/reset/pin`, each
 * a GET that renders a plain HTML form and a POST that handles it. Each
 * route calls the one core step it stands for and renders what it answers.
 * Every POST needs the CSRF token of its form, bound to this browser's
 * cookie; the journey travels as `?request=` and only its own browser can
 * continue it.
 */
export async function journeyRoutes(app: FastifyInstance, deps: JourneyRouteDeps): Promise<void> {
  const { names, attributes } = cookiePolicy(deps.environment);
  // The known-device cookie (docs/journey.md, "A stranger cannot lock the owner out"): long-lived,
  // Secure also in a sandbox served over https.
  const deviceAttributes = {
    ...attributes,
    secure: attributes.secure || (deps.authUrl?.startsWith('https:') ?? false),
    maxAge: KNOWN_DEVICE_TTL_SECONDS,
  };
  useFormBody(app);
  // Cookies are parsed only on the browser routes, not on every API request.
  await app.register(fastifyCookie);
  await app.register(fastifyCsrf, {
    cookieKey: names.csrf,
    cookieOpts: attributes,
    getToken: (request) => (request.body as FormParams | undefined)?.csrf_token,
    getUserInfo: (request) => request.cookies[names.browser] ?? '',
    csrfOpts: { userInfo: true, hmacKey: Buffer.from(deps.csrfKey) },
  });

  // The example number of the mobile fields' hint and of `mobile_invalid` (CONNECT_DEFAULT_COUNTRY).
  const mobileExample = mobileExampleOf(deps.journey.defaultCountry ?? 'PH');
  const sandbox = deps.environment === 'sandbox';
  /** A problem as its page shows it; in the sandbox with what sets the limit behind it. */
  const pageError = (language: PageLanguage, problem: Problem, page: ProblemPage, clientName: string): PageError => ({
    field: problem.field,
    message: problemMessage(language.text, problem, page, clientName, mobileExample.national),
    note: limitNote(problem.limit, sandbox),
  });

  const pageUrl = (page: JourneyPage, requestId: string) => `${PATHS[page]}?request=${encodeURIComponent(requestId)}`;

  const contextOf = (request: FastifyRequest<PageRoute>): StepContext => ({
    requestId: typeof request.query.request === 'string' ? request.query.request : undefined,
    browserId: request.cookies[names.browser],
    sessionId: request.cookies[names.session],
    knownDevice: request.cookies[names.device],
    browserLocale: acceptedLocale(request.headers['accept-language']),
    address: clientAddressOf(request),
    correlationId: request.id,
    signal: requestSignal(request),
  });

  function render(request: FastifyRequest, reply: FastifyReply, result: StepResult): FastifyReply {
    // Answered already (503 at the request's deadline): what the step came to reaches no one.
    if (reply.sent) return reply;
    const csrfToken = () => reply.generateCsrf({ userInfo: request.cookies[names.browser] ?? '' });
    if ((result.kind === 'goto' || result.kind === 'redirect') && result.knownDevice) {
      reply.setCookie(names.device, result.knownDevice, deviceAttributes);
    }
    switch (result.kind) {
      case 'goto':
        if (result.endSession) reply.clearCookie(names.session, attributes);
        return seeOther(reply, pageUrl(result.page, result.requestId));
      case 'redirect':
        if (result.session) reply.setCookie(names.session, result.session, { ...attributes, maxAge: deps.sessionTtlSeconds });
        return seeOther(reply, result.location);
      case 'dead_end': {
        const language = pageLanguage(request, result.uiLocale);
        const { title, message } = language.text.deadEnds[result.reason];
        // `{client}`: whose support to contact, the client the customer came from.
        return sendErrorPage(reply, 400, { language, title, message: fill(message, { client: safeHtml`<strong>${result.clientName ?? ''}</strong>` }) });
      }
      case 'login':
      case 'register': {
        const { journey, problem } = result;
        const language = pageLanguage(request, journey.uiLocale);
        // With user_id the mobile is fixed, and there is no switching between the two pages.
        const fixed = journey.fixedMobile !== null;
        const form = {
          language,
          clientName: journey.clientName,
          csrfToken: csrfToken(),
          error: problem && pageError(language, problem, result.kind, journey.clientName),
          mobile: journey.fixedMobile ?? result.mobile,
          mobileReadonly: fixed,
          mobileExample,
        };
        const other = (page: 'login' | 'register') => (fixed ? undefined : pageUrl(page, journey.requestId));
        const body =
          result.kind === 'login'
            ? loginPage({
                ...form,
                action: pageUrl('login', journey.requestId),
                registerHref: other('register'),
                forgotHref: pageUrl('reset', journey.requestId),
                pinChanged: result.notice === 'pin_changed',
              })
            : registerPage({ ...form, action: pageUrl('register', journey.requestId), loginHref: other('login') });
        return sendPage(reply, problem ? 400 : 200, body, { language, redirectUri: journey.redirectUri });
      }
      case 'reset': {
        const { journey, problem } = result;
        const language = pageLanguage(request, journey.uiLocale);
        const body = resetPage({
          language,
          clientName: journey.clientName,
          action: pageUrl('reset', journey.requestId),
          csrfToken: csrfToken(),
          error: problem && pageError(language, problem, 'reset', journey.clientName),
          // As on the login page: with user_id the mobile is fixed.
          mobile: journey.fixedMobile ?? result.mobile,
          mobileReadonly: journey.fixedMobile !== null,
          mobileExample,
          loginHref: pageUrl('login', journey.requestId),
        });
        return sendPage(reply, problem ? 400 : 200, body, { language, redirectUri: journey.redirectUri });
      }
      case 'otp':
      case 'reset_otp': {
        const { journey, problem } = result;
        const language = pageLanguage(request, journey.uiLocale);
        const body = otpPage({
          language,
          clientName: journey.clientName,
          action: pageUrl(result.kind, journey.requestId),
          csrfToken: csrfToken(),
          error: problem && pageError(language, problem, result.kind, journey.clientName),
          codeSent: result.notice === 'code_sent',
          reset: result.kind === 'reset_otp',
          ...result.otp,
        });
        // The resend countdown's script (views/scripts.ts).
        return sendPage(reply, problem ? 400 : 200, body, { language, redirectUri: journey.redirectUri, script: true });
      }
      case 'new_pin': {
        const { journey, problem } = result;
        const language = pageLanguage(request, journey.uiLocale);
        const body = newPinPage({
          language,
          clientName: journey.clientName,
          action: pageUrl('new_pin', journey.requestId),
          csrfToken: csrfToken(),
          error: problem && pageError(language, problem, 'new_pin', journey.clientName),
          maskedMobile: result.maskedMobile,
        });
        return sendPage(reply, problem ? 400 : 200, body, { language, redirectUri: journey.redirectUri });
      }
      case 'consent': {
        const { journey } = result;
        const language = pageLanguage(request, journey.uiLocale);
        const body = consentPage({
          language,
          clientName: journey.clientName,
          action: pageUrl('consent', journey.requestId),
          csrfToken: csrfToken(),
          maskedMobile: result.maskedMobile,
          scopes: result.scopes,
          otherAccount: result.otherAccount,
        });
        return sendPage(reply, 200, body, { language, redirectUri: journey.redirectUri });
      }
    }
  }

  const counted = (step: JourneyPage, result: StepResult) => {
    deps.countStep?.(step, result);
    return result;
  };

  const html = { config: { html: true } };
  const protectedForm = { ...html, preHandler: app.csrfProtection };

  app.get<{ Querystring: AuthorizeQuery }>('/authorize', html, async (request, reply) => {
    let browserId = request.cookies[names.browser];
    if (!isPlausibleId(browserId)) {
      browserId = randomBytes(32).toString('base64url');
      reply.setCookie(names.browser, browserId, attributes);
    }
    const result = await startJourney(request.query, { browserId, sessionId: request.cookies[names.session], address: clientAddressOf(request) }, deps.journey);
    if (result.kind === 'page_error') {
      const language = requestLanguage(request);
      const message = fill(language.text.linkErrors[result.reason], { client: result.clientName ?? '' });
      let note: SafeHtml | undefined;
      if (result.redirectUris) {
        // Never redirected to, and shown or logged only without its query (docs/journey.md, "`GET /authorize`").
        const registered = maskedRedirectUri(result.redirectUris.registered);
        const received = maskedRedirectUri(result.redirectUris.received);
        request.log.info({ clientId: request.query.client_id, registeredRedirectUri: registered, receivedRedirectUri: received }, 'redirect_uri is not the one registered for the client');
        if (sandbox) note = redirectMismatchNote(result.redirectUris.registered, received);
      }
      return sendErrorPage(reply, 400, { language, title: language.text.linkErrors.title, message, note });
    }
    return render(request, reply, result);
  });

  app.get<PageRoute>(PATHS.login, html, async (request, reply) => render(request, reply, await showLogin(contextOf(request), deps.journey)));
  app.post<FormRoute>(PATHS.login, protectedForm, async (request, reply) => {
    const form = request.body ?? {};
    return render(request, reply, counted('login', await submitLogin(contextOf(request), { action: form.action, mobile: form.mobile, pin: form.pin }, deps.journey)));
  });

  app.get<PageRoute>(PATHS.register, html, async (request, reply) => render(request, reply, await showRegistration(contextOf(request), deps.journey)));
  app.post<FormRoute>(PATHS.register, protectedForm, async (request, reply) => {
    const form = request.body ?? {};
    const fields = { action: form.action, mobile: form.mobile, pin: form.pin, pinConfirmation: form.pin_confirmation };
    return render(request, reply, counted('register', await submitRegistration(contextOf(request), fields, deps.journey)));
  });

  app.get<PageRoute>(PATHS.otp, html, async (request, reply) => render(request, reply, await showOtp(contextOf(request), deps.journey)));
  app.post<FormRoute>(PATHS.otp, protectedForm, async (request, reply) => {
    const form = request.body ?? {};
    return render(request, reply, counted('otp', await submitOtp(contextOf(request), { action: form.action, otp: form.otp }, deps.journey)));
  });

  app.get<PageRoute>(PATHS.reset, html, async (request, reply) => render(request, reply, await showReset(contextOf(request), deps.journey)));
  app.post<FormRoute>(PATHS.reset, protectedForm, async (request, reply) => {
    const form = request.body ?? {};
    return render(request, reply, counted('reset', await submitReset(contextOf(request), { action: form.action, mobile: form.mobile }, deps.journey)));
  });

  app.get<PageRoute>(PATHS.reset_otp, html, async (request, reply) => render(request, reply, await showResetOtp(contextOf(request), deps.journey)));
  app.post<FormRoute>(PATHS.reset_otp, protectedForm, async (request, reply) => {
    const form = request.body ?? {};
    return render(request, reply, counted('reset_otp', await submitResetOtp(contextOf(request), { action: form.action, otp: form.otp }, deps.journey)));
  });

  app.get<PageRoute>(PATHS.new_pin, html, async (request, reply) => render(request, reply, await showNewPin(contextOf(request), deps.journey)));
  app.post<FormRoute>(PATHS.new_pin, protectedForm, async (request, reply) => {
    const form = request.body ?? {};
    const fields = { action: form.action, pin: form.pin, pinConfirmation: form.pin_confirmation };
    return render(request, reply, counted('new_pin', await submitNewPin(contextOf(request), fields, deps.journey)));
  });

  app.get<PageRoute>(PATHS.consent, html, async (request, reply) => render(request, reply, await showConsent(contextOf(request), deps.journey)));
  app.post<FormRoute>(PATHS.consent, protectedForm, async (request, reply) => {
    const form = request.body ?? {};
    return render(request, reply, counted('consent', await submitConsent(contextOf(request), { action: form.action }, deps.journey)));
  });
}
