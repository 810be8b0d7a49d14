import type { FastifyReply, FastifyRequest } from 'fastify';
import type { StepResult } from '../../core/journey/outcomes.js';
import type { Metrics } from '../../metrics/metrics.js';

const GRANTS = new Set(['client_credentials', 'authorization_code', 'refresh_token']);

/**
 * Counts an answered request by its route pattern (never the URL as
 * requested: it may hold a code or a mobile number), method and status,
 * with its latency, and every token issued at `/token` and `/tokens`.
 * Called at the end of every request, by the log controller (`app.ts`, `request-log.ts`).
 */
export function requestCounter(metrics: Metrics): (request: FastifyRequest, reply: FastifyReply) => void {
  return (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    metrics.request(route, request.method, reply.statusCode, reply.elapsedTime / 1000);
    if (reply.statusCode === 200 && request.method === 'POST') {
      if (route === '/token') {
        const grant = (request.body as { grant_type?: unknown } | undefined)?.grant_type;
        metrics.tokenIssued('/token', typeof grant === 'string' && GRANTS.has(grant) ? grant : 'other');
      } else if (route === '/tokens') {
        metrics.tokenIssued('/tokens', 'refresh_token');
      }
    }
  };
}

/**
 * What one step of the hosted login came to, as a metric label: a problem's
 * code (`wrong_pin`, `locked`, …), the page it moved to, back to the client,
 * or why it could not go on. Every value comes from a closed set.
 */
export function stepOutcome(result: StepResult): string {
  switch (result.kind) {
    case 'goto':
      return `to_${result.page}`;
    case 'redirect':
      return 'back_to_client';
    case 'dead_end':
      return result.reason;
    case 'consent':
      return 'consent_asked';
    case 'passkey_offer':
      return 'passkey_offered';
    case 'otp':
    case 'reset_otp':
      return result.problem?.code ?? result.notice ?? 'shown';
    case 'login':
    case 'register':
    case 'reset':
    case 'new_pin':
      return result.problem?.code ?? 'shown';
  }
}
