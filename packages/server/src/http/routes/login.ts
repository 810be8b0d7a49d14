import fastifyCookie from '@fastify/cookie';
import fastifyCsrf from '@fastify/csrf-protection';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Environment } from '../../core/environment.js';
import {
  cancelLogin,
  firstPage,
  openPendingLogin,
  resendOtp,
  showOtpPage,
  submitLogin,
  submitOtp,
  submitRegistration,
  type FlowResult,
  type LoginFlowDeps,
  type PendingLogin,
} from '../../core/login/login-flow.js';
import { useFormBody, type FormParams } from '../plugins/form-body.js';
import { cookiePolicy, seeOther, sendErrorPage, sendPage } from '../plugins/hosted-pages.js';
import { loginPage, otpPage, registerPage } from '../views/pages.js';

/** What the hosted pages need. */
export interface LoginRouteDeps {
  readonly flow: LoginFlowDeps;
  readonly environment: Environment;
  /** Key binding CSRF tokens to the browser cookie. */
  readonly csrfKey: Uint8Array;
  readonly sessionTtlSeconds: number;
}

/** A parameter given twice arrives as an array. */
type PageRoute = { Querystring: { request?: string | string[] } };

type PageRequest = FastifyRequest<PageRoute>;

const PATHS = { login: '/login', register: '/register', otp: '/login/otp' } as const;

/**
 * The hosted pages: `/login`, `/register` and `/login/otp`, each a GET that
 * renders a plain HTML form and a POST that handles it. Every POST needs the
 * CSRF token of its form, bound to this browser's cookie; the pending request
 * travels as `?request=` and only its own browser can continue it.
 */
export async function loginRoutes(app: FastifyInstance, deps: LoginRouteDeps): Promise<void> {
  const { names, attributes } = cookiePolicy(deps.environment);
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

  const pageUrl = (page: keyof typeof PATHS, requestId: string) => `${PATHS[page]}?request=${encodeURIComponent(requestId)}`;

  async function open(request: PageRequest, reply: FastifyReply): Promise<PendingLogin | undefined> {
    const requestId = typeof request.query.request === 'string' ? request.query.request : undefined;
    const pending = await openPendingLogin(requestId, request.cookies[names.browser], deps.flow);
    if ('kind' in pending) {
      sendErrorPage(reply, 400, 'This sign-in has expired', pending.message);
      return undefined;
    }
    return pending;
  }

  function respond(request: PageRequest, reply: FastifyReply, result: FlowResult): FastifyReply {
    const csrfToken = () => reply.generateCsrf({ userInfo: request.cookies[names.browser] ?? '' });
    switch (result.kind) {
      case 'goto':
        return seeOther(reply, pageUrl(result.page, result.requestId));
      case 'client_redirect':
        if (result.sessionId) reply.setCookie(names.session, result.sessionId, { ...attributes, maxAge: deps.sessionTtlSeconds });
        return seeOther(reply, result.location);
      case 'dead_end':
        return sendErrorPage(reply, 400, 'This sign-in cannot continue', result.message);
      case 'login_page':
      case 'register_page': {
        const { pending } = result;
        // With user_id the mobile is fixed, and there is no switching between the two pages.
        const readonly = pending.request.loginHint !== null;
        const form = {
          clientName: pending.client.name,
          csrfToken: csrfToken(),
          error: result.error,
          mobile: pending.request.loginHint ?? result.mobile,
          mobileReadonly: readonly,
        };
        const other = (page: 'login' | 'register') => (readonly ? undefined : pageUrl(page, pending.requestId));
        const body =
          result.kind === 'login_page'
            ? loginPage({ ...form, action: pageUrl('login', pending.requestId), registerHref: other('register') })
            : registerPage({ ...form, action: pageUrl('register', pending.requestId), loginHref: other('login') });
        return sendPage(reply, result.error ? 400 : 200, body, pending.request.redirectUri);
      }
      case 'otp_page': {
        const { pending } = result;
        const body = otpPage({
          clientName: pending.client.name,
          action: pageUrl('otp', pending.requestId),
          csrfToken: csrfToken(),
          error: result.error,
          notice: result.notice,
          ...result.otp,
        });
        return sendPage(reply, result.error ? 400 : 200, body, pending.request.redirectUri);
      }
    }
  }

  const html = { config: { html: true } };
  const protectedForm = { ...html, preHandler: app.csrfProtection };

  app.get<PageRoute>(PATHS.login, html, async (request, reply) => {
    const pending = await open(request, reply);
    if (!pending) return reply;
    if (firstPage(pending) === 'register') return seeOther(reply, pageUrl('register', pending.requestId));
    return respond(request, reply, { kind: 'login_page', pending });
  });

  app.post<PageRoute & { Body: FormParams | undefined }>(PATHS.login, protectedForm, async (request, reply) => {
    const pending = await open(request, reply);
    if (!pending) return reply;
    const form = request.body ?? {};
    if (form.action === 'cancel') return respond(request, reply, await cancelLogin(pending, deps.flow));
    return respond(request, reply, await submitLogin(pending, { mobile: form.mobile, pin: form.pin }, request.ip, deps.flow));
  });

  app.get<PageRoute>(PATHS.register, html, async (request, reply) => {
    const pending = await open(request, reply);
    if (!pending) return reply;
    if (pending.hintedCustomer) return seeOther(reply, pageUrl('login', pending.requestId));
    return respond(request, reply, { kind: 'register_page', pending });
  });

  app.post<PageRoute & { Body: FormParams | undefined }>(PATHS.register, protectedForm, async (request, reply) => {
    const pending = await open(request, reply);
    if (!pending) return reply;
    const form = request.body ?? {};
    if (form.action === 'cancel') return respond(request, reply, await cancelLogin(pending, deps.flow));
    const fields = { mobile: form.mobile, pin: form.pin, pinConfirmation: form.pin_confirmation };
    return respond(request, reply, await submitRegistration(pending, fields, request.ip, deps.flow));
  });

  app.get<PageRoute>(PATHS.otp, html, async (request, reply) => {
    const pending = await open(request, reply);
    if (!pending) return reply;
    return respond(request, reply, await showOtpPage(pending, deps.flow));
  });

  app.post<PageRoute & { Body: FormParams | undefined }>(PATHS.otp, protectedForm, async (request, reply) => {
    const pending = await open(request, reply);
    if (!pending) return reply;
    const form = request.body ?? {};
    if (form.action === 'cancel') return respond(request, reply, await cancelLogin(pending, deps.flow));
    if (form.action === 'resend') return respond(request, reply, await resendOtp(pending, request.ip, deps.flow));
    return respond(request, reply, await submitOtp(pending, form.otp ?? '', request.cookies[names.session], deps.flow));
  });
}
