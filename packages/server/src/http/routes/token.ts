import type { FastifyInstance } from 'fastify';
import { handleTokenRequest, type TokenEndpointDeps } from '../../core/grants/token-request.js';
import { InvalidRequest } from '../../core/errors.js';
import { formatScope } from '../../core/scopes.js';
import { useFormBody, type FormParams } from '../plugins/form-body.js';
import { dpopProofsOf } from '../plugins/dpop-headers.js';

const tokenResponseSchema = {
  type: 'object',
  properties: {
    access_token: { type: 'string' },
    token_type: { type: 'string' },
    expires_in: { type: 'integer' },
    refresh_token: { type: 'string' },
    scope: { type: 'string' },
  },
  required: ['access_token', 'token_type', 'expires_in'],
} as const;

/** `POST /token` (RFC 6749 §3.2; docs/consumer-guide.md, docs/tokens.md). */
export async function tokenRoutes(app: FastifyInstance, deps: TokenEndpointDeps): Promise<void> {
  useFormBody(app);

  app.post<{ Body: FormParams | undefined }>(
    '/token',
    { schema: { response: { 200: tokenResponseSchema } } },
    async (request, reply) => {
      const result = await handleTokenRequest(
        { params: request.body ?? {}, authorization: request.headers.authorization, ip: request.ip, correlationId: request.id, dpopProofs: dpopProofsOf(request) },
        deps,
      );
      // RFC 6749 §5.1: token responses must not be cached.
      reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
      // RFC 9449 §8: the nonce the next proof carries.
      if (result.dpopNonce !== undefined) reply.header('dpop-nonce', result.dpopNonce);
      return {
        access_token: result.accessToken,
        token_type: result.tokenType,
        expires_in: result.expiresIn,
        refresh_token: result.refreshToken,
        // RFC 6749 §5.1: the scope granted, whenever there is one (it may be less than asked for, e.g. on a refresh).
        scope: result.scopes.length > 0 ? formatScope(result.scopes) : undefined,
      };
    },
  );

  app.route({
    // HEAD comes with GET; OPTIONS too gets 405 + Allow, not a 404 for a resource that exists.
    method: ['GET', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'],
    url: '/token',
    handler: async (_request, reply) => {
      reply.header('allow', 'POST');
      throw new InvalidRequest('the token endpoint accepts POST only', { status: 405 });
    },
  });
}
