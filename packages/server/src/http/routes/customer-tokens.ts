import type { FastifyInstance, FastifyRequest } from 'fastify';
import { authenticateBearer, type BearerDeps } from '../../core/tokens/authenticate-bearer.js';
import { refreshIdempotently, type RefreshIdempotentlyDeps } from '../../core/customer-tokens/refresh-idempotently.js';
import { InvalidRequest } from '../../core/errors.js';
import { dpopProofsOf, pathOf } from '../plugins/dpop-headers.js';

/** What `POST /tokens` needs. */
export interface CustomerTokenRouteDeps extends RefreshIdempotentlyDeps {
  readonly bearer: BearerDeps;
  /** `{base_url}`, as published: a DPoP proof's `htu` names `{base_url}/tokens`. */
  baseUrl(): string;
}

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;
const BODY_LIMIT_BYTES = 16 * 1024;

interface RawJson {
  readonly raw: string;
  readonly value: unknown;
}

/**
 * `POST {base_url}/tokens` (docs/consumer-guide.md, "Refreshing a customer's
 * access token"; docs/tokens.md, "Refresh"): a customer refresh token for a
 * new customer access token, authenticated with the client's own access
 * token. Every answer echoes `Request-Reference-No`; a retry with
 * the same reference replays the first answer while its tokens still stand.
 */
export async function customerTokenRoutes(app: FastifyInstance, deps: CustomerTokenRouteDeps): Promise<void> {
  // Any body type reaches the handler, which answers 415 itself for non-JSON.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string', bodyLimit: BODY_LIMIT_BYTES }, (_request, body, done) => {
    done(null, body);
  });

  app.addHook('onRequest', async (request, reply) => {
    // Echoed on every answer whenever sent, errors included (docs/consumer-guide.md);
    // Node already bounds header sizes.
    const reference = request.headers['request-reference-no'];
    if (typeof reference === 'string') reply.header('request-reference-no', reference);
    reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
  });

  app.post<{ Body: string | undefined }>('/tokens', async (request, reply) => {
    // A DPoP-bound client token comes with a proof of its key (docs/consumer-guide.md, "DPoP").
    const { client, dpopJkt } = await authenticateBearer(
      { authorization: request.headers.authorization, dpopProofs: dpopProofsOf(request), method: 'POST', url: `${deps.baseUrl()}${pathOf(request)}` },
      deps.bearer,
    );
    if (dpopJkt !== undefined) reply.header('dpop-nonce', deps.bearer.dpop.nonces.issue());
    if (!acceptsJson(request.headers.accept)) {
      throw new InvalidRequest('this endpoint answers application/json; the Accept header excludes it', { status: 406 });
    }
    if (!isJson(request.headers['content-type'])) {
      throw new InvalidRequest('Content-Type must be application/json', { status: 415 });
    }
    const reference = request.headers['request-reference-no'];
    if (typeof reference !== 'string' || !UUID_V4.test(reference)) {
      throw new InvalidRequest('Request-Reference-No must be a UUID (version 4)');
    }
    const body = parseBody(request.body);
    const { accessToken, refreshToken, expiresAt, scope } = await refreshIdempotently(
      { client, reference, body: body.raw, refreshToken: refreshTokenOf(body), correlationId: request.id, dpopJkt },
      deps,
    );
    return reply.type('application/json; charset=utf-8').send({ accessToken, refreshToken, expiresAt, ...(scope === undefined ? {} : { scope }) });
  });
}

function parseBody(raw: string | undefined): RawJson {
  if (raw === undefined || raw === '') throw new InvalidRequest('the body must be a JSON object with refreshToken');
  try {
    return { raw, value: JSON.parse(raw) as unknown };
  } catch {
    throw new InvalidRequest('the body is not valid JSON');
  }
}

/** The body's `refreshToken` member, checked by the refresh itself; `undefined` when the body is no JSON object. */
function refreshTokenOf(body: RawJson): unknown {
  const value = body.value;
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as { refreshToken?: unknown }).refreshToken : undefined;
}

function isJson(contentType: string | undefined): boolean {
  const type = contentType?.split(';')[0]?.trim().toLowerCase();
  return type === 'application/json';
}

/**
 * Whether an Accept header allows application/json (absent: anything goes).
 * The most specific matching range decides (RFC 9110 §12.5.1): a wildcard
 * does not override `application/json;q=0`.
 */
function acceptsJson(accept: FastifyRequest['headers']['accept']): boolean {
  if (accept === undefined || accept.trim() === '') return true;
  const specificity: Record<string, number> = { 'application/json': 3, 'application/*': 2, '*/*': 1 };
  let best = { specificity: 0, q: 0 };
  for (const range of accept.split(',')) {
    const [type = '', ...params] = range.split(';').map((part) => part.trim().toLowerCase());
    const rank = specificity[type];
    if (rank === undefined || rank <= best.specificity) continue;
    const q = params.find((p) => p.startsWith('q='));
    best = { specificity: rank, q: q === undefined ? 1 : Number(q.slice(2)) || 0 };
  }
  return best.q > 0;
}
