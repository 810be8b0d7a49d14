import fastifyCookie from '@fastify/cookie';
import fastifyCsrf from '@fastify/csrf-protection';
import { randomBytes } from 'node:crypto';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AuthorizeQuery } from '../../core/authorize/authorization-request.js';
import { mobileExample as mobileExampleOf } from '../../core/customers/mobile.js';
import type { Environment } from '../../core/environment.js';
import type { JourneyDeps } from '../../core/journey/deps.js';
import type { StepContext } from '../../core/journey/open.js';
import type { JourneyPage, StepResult } from '../../core/journey/outcomes.js';
import { isPlausibleId } from '../../core/journey/session.js';
import { KNOWN_DEVICE_TTL_SECONDS } from '../../core/journey/known-device.js';
import { startJourney } from '../../core/journey/start.js';
import { JOURNEY_STEPS, type AnyJourneyStep } from '../../core/journey/steps/index.js';
import { maskedRedirectUri } from '../../core/authorize/redirect.js';
import { clientAddressOf } from '../plugins/client-address.js';
import { useFormBody, type FormParams } from '../plugins/form-body.js';
import { acceptedLocale, cookiePolicy, pageLanguage, requestLanguage, seeOther, sendErrorPage, sendPage } from '../plugins/hosted-pages.js';
import { requestSignal } from '../plugins/request-deadline.js';
import { fill, html as safeHtml, type SafeHtml } from '../views/html.js';
import { limitNote } from '../views/limit-notes.js';
import { problemMessage } from '../views/messages/index.js';
import { redirectMismatchNote } from '../views/pages.js';
import { PASSKEY_PATHS, renderStepPage } from '../views/step-pages.js';
import { enrolPasskey, passkeyOptions, signInWithPasskey, type PasskeyAnswer, type PasskeyErrorCode } from '../../core/journey/passkeys.js';

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
 * a GET that renders a plain HTML form and a POST that handles it. Every
 * step of the step table (`core/journey/steps/`) is registered at its path
 * in one loop; what it answers is rendered by the view of its kind
 * (`views/step-pages.ts`).
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
    if ((result.kind === 'goto' || result.kind === 'redirect' || result.kind === 'passkey_offer') && result.knownDevice) {
      reply.setCookie(names.device, result.knownDevice, deviceAttributes);
    }
    // The offer of a passkey sets the session cookie the redirect it stands in for would have set.
    if (result.kind === 'passkey_offer') reply.setCookie(names.session, result.session, { ...attributes, maxAge: deps.sessionTtlSeconds });
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
      default: {
        const { journey } = result;
        const language = pageLanguage(request, journey.uiLocale);
        const rendered = renderStepPage(result, {
          language,
          csrfToken,
          pageUrl: (to) => pageUrl(to, journey.requestId),
          // A problem as its page shows it; in the sandbox with what sets the limit behind it.
          error: (problem, on) =>
            problem && {
              field: problem.field,
              message: problemMessage(language.text, problem, on, journey.clientName, mobileExample.national),
              note: limitNote(problem.limit, sandbox),
            },
          mobileExample,
        });
        const options = { language, redirectUri: journey.redirectUri, ...(rendered.script ? { script: true } : {}) };
        return sendPage(reply, rendered.status, rendered.body, options);
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

  /** The step's form as posted: each of its fields under the name the page posts it. */
  const formOf = (step: AnyJourneyStep, body: FormParams | undefined) =>
    Object.fromEntries(Object.entries(step.fields).map(([field, name]) => [field, body?.[name]]));

  // Every step of the journey: its page at its path (GET) and its form (POST).
  for (const step of JOURNEY_STEPS) {
    app.get<PageRoute>(PATHS[step.page], html, async (request, reply) => render(request, reply, await step.show(contextOf(request), deps.journey)));
    app.post<FormRoute>(PATHS[step.page], protectedForm, async (request, reply) => {
      const result = await step.submit(contextOf(request), formOf(step, request.body), deps.journey);
      return render(request, reply, counted(step.page, result));
    });
  }

  // Passkeys (docs/journey.md, "Passkeys"): JSON for the pages' script, CSRF-protected as every form.
  const answerPasskey = (request: FastifyRequest<FormRoute>, reply: FastifyReply, answer: PasskeyAnswer, requestId: string | undefined): FastifyReply => {
    if (reply.sent) return reply;
    reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
    switch (answer.kind) {
      case 'options':
        return reply.code(200).send(answer.options);
      case 'added':
        return reply.code(200).send({ added: true });
      case 'signed_in':
        reply.setCookie(names.session, answer.session, { ...attributes, maxAge: deps.sessionTtlSeconds });
        reply.setCookie(names.device, answer.knownDevice, deviceAttributes);
        return reply.code(200).send({ location: answer.location });
      case 'refused': {
        const language = pageLanguage(request, answer.uiLocale ?? undefined);
        const body: Record<string, string | number> = { error: answer.error, message: language.text.passkeyErrors[answer.error] };
        if (answer.retryAfterSeconds !== undefined) {
          body.retry_after = answer.retryAfterSeconds;
          reply.header('retry-after', String(answer.retryAfterSeconds));
        }
        if (answer.error === 'journey_ended') body.location = whereNow(answer.at, requestId);
        return reply.code(PASSKEY_ERROR_STATUS[answer.error]).send(body);
      }
    }
  };
  /** Where a journey that ended (or moved on) stands now: its page (a dead end shows there as on any page). */
  const whereNow = (at: StepResult | undefined, requestId: string | undefined): string => {
    if (at?.kind === 'goto') return pageUrl(at.page, at.requestId);
    if (at?.kind === 'redirect') return at.location;
    return pageUrl('login', requestId ?? '');
  };
  // A form without its CSRF token gets the passkey requests' own JSON error; any other failure is answered as elsewhere.
  const appErrors = app.errorHandler;
  const passkeyForm = {
    preHandler: app.csrfProtection,
    errorHandler: (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
      if (error.code !== 'FST_CSRF_INVALID_TOKEN' && error.code !== 'FST_CSRF_MISSING_SECRET') return appErrors.call(app, error, request, reply);
      const language = pageLanguage(request, undefined);
      return reply.code(403).header('cache-control', 'no-store').send({ error: 'csrf', message: language.text.failures.formExpired.message });
    },
  };
  app.post<FormRoute>(PASSKEY_PATHS.options, passkeyForm, async (request, reply) =>
    answerPasskey(request, reply, await passkeyOptions(contextOf(request), request.body?.purpose, deps.journey), contextOf(request).requestId),
  );
  app.post<FormRoute>(PASSKEY_PATHS.signIn, passkeyForm, async (request, reply) =>
    answerPasskey(request, reply, await signInWithPasskey(contextOf(request), request.body?.credential, deps.journey), contextOf(request).requestId),
  );
  app.post<FormRoute>(PASSKEY_PATHS.enrol, passkeyForm, async (request, reply) =>
    answerPasskey(request, reply, await enrolPasskey(contextOf(request), request.body?.credential, deps.journey), contextOf(request).requestId),
  );
}

/** The status of each error of the passkey requests. */
const PASSKEY_ERROR_STATUS: Record<PasskeyErrorCode, number> = {
  passkey_refused: 400,
  passkey_expired: 400,
  account_unavailable: 403,
  too_many_attempts: 429,
  journey_ended: 409,
};
