import type { FastifyInstance } from 'fastify';
import { clientAuthInputOf, type ClientAuthInput } from '../../core/clients/client-authenticate.js';
import type { Client } from '../../core/clients/client.js';
import { InvalidRequest } from '../../core/errors.js';
import { introspectToken, revokeToken, type TokenStateDeps } from '../../core/tokens/introspect-token.js';
import { useFormBody, type FormParams } from '../plugins/form-body.js';

/** What introspection and revocation need. */
export interface TokenStateRouteDeps {
  authenticate(input: ClientAuthInput): Promise<Client>;
  readonly state: TokenStateDeps;
}

/**
 * `POST /introspect` (RFC 7662) and `POST /revoke` (RFC 7009), with client
 * authentication as at `/token`. A client sees and revokes only its own
 * tokens.
 */
export async function tokenStateRoutes(app: FastifyInstance, deps: TokenStateRouteDeps): Promise<void> {
  useFormBody(app);
  const clientOf = (request: { body: FormParams | undefined; headers: { authorization?: string }; ip: string; id: string }) => {
    const params = request.body ?? {};
    return deps.authenticate(clientAuthInputOf(params, { authorization: request.headers.authorization, ip: request.ip, correlationId: request.id }));
  };

  app.post<{ Body: FormParams | undefined }>('/introspect', async (request, reply) => {
    const client = await clientOf(request);
    // RFC 7662 §2.1: token is required.
    if (request.body?.token === undefined) throw new InvalidRequest('token is required');
    reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
    return introspectToken(request.body.token, client, deps.state);
  });

  app.post<{ Body: FormParams | undefined }>('/revoke', async (request, reply) => {
    const client = await clientOf(request);
    // RFC 7009 §2.1: token is required.
    if (request.body?.token === undefined) throw new InvalidRequest('token is required');
    await revokeToken(request.body.token, client, deps.state);
    // RFC 7009 §2.2: 200 whether or not the token was valid. The body is an empty
    // JSON object, so that clients which read every answer as JSON find one.
    return reply.code(200).header('cache-control', 'no-store').header('pragma', 'no-cache').send({});
  });
}
