import type { FastifyInstance } from 'fastify';
import { pushAuthorizationRequest, type PushDeps } from '../../core/authorize/pushed-request.js';
import { dpopProofsOf } from '../plugins/dpop-headers.js';
import { useFormBody, type FormParams } from '../plugins/form-body.js';

const pushedResponseSchema = {
  type: 'object',
  properties: {
    request_uri: { type: 'string' },
    expires_in: { type: 'integer' },
  },
  required: ['request_uri', 'expires_in'],
} as const;

/**
 * `POST /par` (RFC 9126; docs/journey.md, "Pushed authorization requests"):
 * the client, authenticated as at `/token`, pushes the parameters of an
 * authorization request and gets the `request_uri` that stands for them at
 * `/authorize`. Errors in the token endpoint's JSON format.
 */
export async function parRoutes(app: FastifyInstance, deps: PushDeps): Promise<void> {
  useFormBody(app);

  app.post<{ Body: FormParams | undefined }>('/par', { schema: { response: { 201: pushedResponseSchema } } }, async (request, reply) => {
    const pushed = await pushAuthorizationRequest(
      { params: request.body ?? {}, authorization: request.headers.authorization, ip: request.ip, correlationId: request.id, dpopProofs: dpopProofsOf(request) },
      deps,
    );
    // RFC 9126 §2.2: 201 Created, never cached.
    reply.code(201).header('cache-control', 'no-store').header('pragma', 'no-cache');
    return { request_uri: pushed.requestUri, expires_in: pushed.expiresIn };
  });

}
