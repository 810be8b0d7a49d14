import type { FastifyInstance } from 'fastify';

/** Headers every response carries: no sniffing, no framing, no referrer, nothing to load. */
const API_HEADERS = {
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
  'cross-origin-resource-policy': 'same-origin',
} as const;

/**
 * Sets the strict security headers on every response. In production the
 * public URLs are `https://`, so browsers are also told to stay on HTTPS.
 */
export function registerSecurityHeaders(app: FastifyInstance, options: { hsts: boolean }): void {
  const headers: Record<string, string> = { ...API_HEADERS };
  if (options.hsts) headers['strict-transport-security'] = 'max-age=31536000; includeSubDomains';
  // A callback hook, not an async one: no promise per request for synchronous work.
  app.addHook('onRequest', (_request, reply, done) => {
    reply.headers(headers);
    done();
  });
}
