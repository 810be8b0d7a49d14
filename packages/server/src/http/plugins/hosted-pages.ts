import type { FastifyReply, FastifyRequest } from 'fastify';
import Negotiator from 'negotiator';
import { localeOfTag, pickUiLocale, type UiLocale } from '../../core/authorize/ui-locales.js';
import type { Environment } from '../../core/environment.js';
import type { SafeHtml } from '../views/html.js';
import { languageOf, type Language } from '../views/messages/index.js';
import { errorPage } from '../views/pages.js';

/** Names of the hosted pages' cookies; `__Host-` in production (HTTPS only, this host only, path /). */
export interface CookieNames {
  /** Binds a pending authorization request to the browser that started it. */
  readonly browser: string;
  /** The customer's login session. */
  readonly session: string;
  /** The CSRF secret of the forms. */
  readonly csrf: string;
  /** The browsers in which customers signed in or reset their PIN (`core/journey/known-device.ts`). */
  readonly device: string;
}

/** The cookie names and attributes for an environment. */
export function cookiePolicy(environment: Environment) {
  const secure = environment === 'production';
  const prefix = secure ? '__Host-' : '';
  const names: CookieNames = { browser: `${prefix}connect_browser`, session: `${prefix}connect_session`, csrf: `${prefix}connect_csrf`, device: `${prefix}connect_device` };
  const attributes = { path: '/', httpOnly: true, sameSite: 'lax' as const, secure };
  return { names, attributes };
}

/**
 * The CSP of a hosted page: own stylesheet only, no framing, and forms may
 * post only here — or, after a redirect, to the client's redirect URI
 * (browsers check `form-action` on redirects too). No script at all,
 * except on a page with `script`: the login, one-time-PIN and passkey
 * pages, whose scripts are files Connect serves (`script-src 'self'`;
 * never inline script), and may ask Connect only (`connect-src 'self'`).
 */
export function pageCsp(redirectUri?: string, options: { script?: boolean } = {}): string {
  const formAction = ["'self'"];
  if (redirectUri) {
    try {
      const url = new URL(redirectUri);
      formAction.push(url.protocol === 'https:' || url.protocol === 'http:' ? url.origin : url.protocol);
    } catch {
      // A stored redirect URI is always valid; without one, forms post here only.
    }
  }
  return [
    "default-src 'none'",
    // The passkey script's requests go to Connect only (`/login/passkey…`).
    ...(options.script ? ["script-src 'self'", "connect-src 'self'"] : []),
    "style-src 'self'",
    "img-src 'self' data:",
    `form-action ${formAction.join(' ')}`,
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; ');
}

/** The language of a hosted page, and whether the browser's `Accept-Language` chose it. */
export interface PageLanguage extends Language {
  readonly negotiated: boolean;
}

/** The tags `Accept-Language` is matched against: `tl` (Tagalog) stands for Filipino too. */
const ACCEPTED_TAGS = ['en', 'fil', 'tl'];

/**
 * The language of a hosted page (docs/hosted-login.md, "Languages"): the
 * one the journey's `ui_locales` chose (`chosen`), else the one the
 * browser's `Accept-Language` prefers most (by q-value) among those the
 * pages speak, else English.
 */
export function pageLanguage(request: FastifyRequest, chosen: UiLocale | null | undefined): PageLanguage {
  if (chosen) return { ...languageOf(chosen), negotiated: false };
  return { ...languageOf(acceptedLocale(request.headers['accept-language']) ?? 'en'), negotiated: true };
}

/**
 * The language of a page outside a journey (an error of `/authorize` or of
 * any hosted page): the `ui_locales` of its own address, when it has one
 * the pages speak, else as {@link pageLanguage}.
 */
export function requestLanguage(request: FastifyRequest): PageLanguage {
  return pageLanguage(request, pickUiLocale((request.query as Record<string, unknown> | undefined)?.ui_locales));
}

/** The locale `Accept-Language` prefers, when it names one the pages speak. */
export function acceptedLocale(header: string | undefined): UiLocale | undefined {
  try {
    const tag = new Negotiator({ headers: { 'accept-language': header } }).language(ACCEPTED_TAGS);
    return tag === undefined ? undefined : localeOfTag(tag);
  } catch {
    // A header that cannot be parsed chooses nothing.
    return undefined;
  }
}

/**
 * Sends a hosted page: HTML, never cached, with its CSP (`script`: the
 * page loads Connect's own script, see {@link pageCsp}), its
 * `Content-Language`, and `Vary: Accept-Language` when that header chose
 * the language.
 */
export function sendPage(
  reply: FastifyReply,
  status: number,
  body: string,
  options: { language: PageLanguage; redirectUri?: string; script?: boolean },
): FastifyReply {
  reply.header('content-language', options.language.locale);
  if (options.language.negotiated) reply.header('vary', withVary(reply.getHeader('vary'), 'Accept-Language'));
  return reply
    .code(status)
    .header('content-type', 'text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .header('pragma', 'no-cache')
    .header('content-security-policy', pageCsp(options.redirectUri, { script: options.script }))
    .send(body);
}

/** `Vary` with `name` added to what it says already. */
function withVary(current: unknown, name: string): string {
  const names = typeof current === 'string' && current.trim() !== '' ? current.split(',').map((n) => n.trim()) : [];
  return names.some((n) => n.toLowerCase() === name.toLowerCase() || n === '*') ? names.join(', ') : [...names, name].join(', ');
}

/** Sends the error page, in `language`. */
export function sendErrorPage(
  reply: FastifyReply,
  status: number,
  page: { language: PageLanguage; title: string; message: SafeHtml | string; details?: string | undefined; note?: SafeHtml | string | undefined },
): FastifyReply {
  return sendPage(reply, status, errorPage(page), { language: page.language });
}

/** 303 See Other: after a form POST the browser follows with a GET (RFC 9700 §4.12). */
export function seeOther(reply: FastifyReply, location: string): FastifyReply {
  return reply.code(303).header('location', location).header('cache-control', 'no-store').send();
}

/** Whether a route renders HTML (its errors then become error pages, not JSON). */
export function isHtmlRoute(request: FastifyRequest): boolean {
  return (request.routeOptions.config as { html?: boolean } | undefined)?.html === true;
}
