import type { IncomingMessage, ServerResponse } from 'node:http';
import helmet, { type HelmetOptions } from 'helmet';

/**
 * The policy, as helmet's options: no sniffing, no framing, no referrer,
 * nothing to load, no cross-origin reads; in production, where the public
 * URLs are `https://`, browsers are also told to stay on HTTPS. Every
 * header helmet would add beyond these is off, so the policy is exactly
 * the one Connect has always sent (docs/hosted-login.md lists the pages' own).
 */
function policy(hsts: boolean): HelmetOptions {
  return {
    contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } },
    crossOriginEmbedderPolicy: false,
    crossOriginOpenerPolicy: false,
    crossOriginResourcePolicy: { policy: 'same-origin' },
    originAgentCluster: false,
    referrerPolicy: { policy: 'no-referrer' },
    strictTransportSecurity: hsts ? { maxAge: 31_536_000, includeSubDomains: true } : false,
    xDnsPrefetchControl: false,
    xDownloadOptions: false,
    xFrameOptions: { action: 'deny' },
    xPermittedCrossDomainPolicies: false,
    xPoweredBy: false,
    xXssProtection: false,
  };
}

/**
 * The security headers of every response, as helmet writes them for
 * {@link policy}. Helmet is run once, at start-up, against a response that
 * only records what is set: the headers do not depend on the request, and
 * setting a ready object on each reply costs a request far less than
 * running helmet's middleware (or rebuilding it, as `@fastify/helmet`
 * does on every request) would. Hosted pages replace the
 * `Content-Security-Policy` with their own (`hosted-pages.ts`).
 */
export function securityHeaders(options: { hsts: boolean }): Readonly<Record<string, string>> {
  const headers: Record<string, string> = {};
  const recorder = {
    setHeader(name: string, value: string | number | readonly string[]) {
      headers[name.toLowerCase()] = String(value);
      return recorder;
    },
    removeHeader(name: string) {
      delete headers[name.toLowerCase()];
    },
  };
  helmet(policy(options.hsts))({} as IncomingMessage, recorder as unknown as ServerResponse, (error?: unknown) => {
    if (error) throw error;
  });
  return Object.freeze(headers);
}
