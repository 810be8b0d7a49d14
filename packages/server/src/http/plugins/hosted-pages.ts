import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Environment } from '../../core/environment.js';
import { errorPage } from '../views/pages.js';

/** Names of the hosted pages' cookies; `__Host-` in production (HTTPS only, this host only, path /). */
export interface CookieNames {
  /** Binds a pending authorization request to the browser that started it. */
  readonly browser: string;
  /** The customer's login session. */
  readonly session: string;
  /** The CSRF secret of the forms. */
  readonly csrf: string;
}

/** The cookie names and attributes for an environment. */
export function cookiePolicy(environment: Environment) {
  const secure = environment === 'production';
  const prefix = secure ? '__Host-' : '';
  const names: CookieNames = { browser: `${prefix}connect_browser`, session: `${prefix}connect_session`, csrf: `${prefix}connect_csrf` };
  const attributes = { path: '/', httpOnly: true, sameSite: 'lax' as const, secure };
  return { names, attributes };
}

/**
 * The CSP of a hosted page: own stylesheet only, no script at all, no
 * framing, and forms may post only here — or, after a redirect, to the
 * client's redirect URI (browsers check `form-action` on redirects too).
 */
export function pageCsp(redirectUri?: string): string {
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
    "style-src 'self'",
    "img-src 'self' data:",
    `form-action ${formAction.join(' ')}`,
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; ');
}

/** Sends a hosted page: HTML, never cached, with its CSP. */
export function sendPage(reply: FastifyReply, status: number, body: string, redirectUri?: string): FastifyReply {
  return reply
    .code(status)
    .header('content-type', 'text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .header('pragma', 'no-cache')
    .header('content-security-policy', pageCsp(redirectUri))
    .send(body);
}

/** Sends the error page. */
export function sendErrorPage(reply: FastifyReply, status: number, title: string, message: string): FastifyReply {
  return sendPage(reply, status, errorPage(title, message));
}

/** 303 See Other: after a form POST the browser follows with a GET (RFC 9700 §4.12). */
export function seeOther(reply: FastifyReply, location: string): FastifyReply {
  return reply.code(303).header('location', location).header('cache-control', 'no-store').send();
}

/** Whether a route renders HTML (its errors then become error pages, not JSON). */
export function isHtmlRoute(request: FastifyRequest): boolean {
  return (request.routeOptions.config as { html?: boolean } | undefined)?.html === true;
}
