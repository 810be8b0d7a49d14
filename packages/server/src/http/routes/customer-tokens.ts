import type { FastifyInstance, FastifyRequest } from 'fastify';
import { authenticateBearer, type BearerDeps } from '../../core/tokens/authenticate-bearer.js';
import { runIdempotently, type IdempotencyDeps } from '../../core/customer-tokens/idempotent-refresh.js';
import { checkReplayedTokens } from '../../core/customer-tokens/check-replayed-tokens.js';
import { prepareRefresh, type RefreshDeps, type RefreshedTokens } from '../../core/grants/refresh-token.js';
import { InvalidRequest, UnauthorizedClient } from '../../core/errors.js';
import { formatScope } from '../../core/scopes.js';
import { hasControlCharacter } from '../../core/control-characters.js';

/** What `POST /tokens` needs. */
export interface CustomerTokenRouteDeps {
  readonly bearer: BearerDeps;
  readonly refresh: RefreshDeps;
  readonly idempotency: IdempotencyDeps;
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
    const client = await authenticateBearer(request.headers.authorization, deps.bearer);
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
    if (!client.grants.includes('refresh_token')) {
      throw new UnauthorizedClient('refresh is not enabled for this client', { status: 403 });
    }
    const { response } = await runIdempotently(
      { clientId: client.id, reference: reference.toLowerCase(), body: body.raw },
      async () => {
        const { refreshed, apply } = await prepareRefresh(refreshTokenOf(body), client, deps.refresh, { correlationId: request.id });
        const response = answerOf(refreshed);
        return {
          response,
          async apply() {
            const applied = await apply();
            // Within the reuse interval: the token another refresh minted (docs/tokens.md, "Concurrent refreshes").
            return applied === refreshed ? response : answerOf(applied);
          },
        };
      },
      deps.idempotency,
      // A replay hands out the stored tokens only while they still stand.
      (stored, firstMayRun) => checkReplayedTokens(stored, client, deps.refresh, firstMayRun),
    );
    const { accessToken, refreshToken, expiresAt, scope } = response;
    // The scope of the new access token, when it has one (docs/consumer-guide.md, "Refreshing a customer's access token").
    return reply.type('application/json; charset=utf-8').send({ accessToken, refreshToken, expiresAt, ...(scope === undefined ? {} : { scope }) });
  });
}

/** The answer to a refresh, with what a replay re-checks (stored sealed, never sent): its session and access token's `jti`. */
function answerOf(refreshed: RefreshedTokens) {
  const { accessToken, refreshToken, expiresAt, sid, accessJti } = refreshed;
  const scope = refreshed.scopes.length > 0 ? { scope: formatScope(refreshed.scopes) } : {};
  return { accessToken, refreshToken, expiresAt, ...scope, sid, accessJti };
}

function parseBody(raw: string | undefined): RawJson {
  if (raw === undefined || raw === '') throw new InvalidRequest('the body must be a JSON object with refreshToken');
  try {
    return { raw, value: JSON.parse(raw) as unknown };
  } catch {
    throw new InvalidRequest('the body is not valid JSON');
  }
}

function refreshTokenOf(body: RawJson): string {
  const value = body.value;
  const token = value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as { refreshToken?: unknown }).refreshToken : undefined;
  if (typeof token !== 'string' || token === '') throw new InvalidRequest('refreshToken is required and must be a string');
  // The rule of every other parameter (plugins/control-characters.ts), for the one value of this JSON body.
  if (hasControlCharacter(token)) throw new InvalidRequest('refreshToken contains a control character');
  return token;
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
