import fastifyCookie from '@fastify/cookie';
import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { AuthorizeQuery } from '../../core/authorize/authorization-request.js';
import { startAuthorization, type StartAuthorizationDeps } from '../../core/authorize/start-authorization.js';
import { cookiePolicy, seeOther, sendErrorPage } from '../plugins/hosted-pages.js';
import type { Environment } from '../../core/environment.js';

/** `GET /authorize` (CONTRACT.md §6): the browser entry point of the customer's authorization. */
export async function authorizeRoutes(app: FastifyInstance, deps: { flow: StartAuthorizationDeps; environment: Environment }): Promise<void> {
  const { names, attributes } = cookiePolicy(deps.environment);
  // Cookies are parsed only on the browser routes, not on every API request.
  await app.register(fastifyCookie);

  app.get<{ Querystring: AuthorizeQuery }>('/authorize', { config: { html: true } }, async (request, reply) => {
    let browserId = request.cookies[names.browser];
    if (!browserId || browserId.length > 100) {
      browserId = randomBytes(32).toString('base64url');
      reply.setCookie(names.browser, browserId, attributes);
    }
    const result = await startAuthorization(request.query, { browserId, sessionId: request.cookies[names.session] }, deps.flow);
    if (result.kind === 'page_error') return sendErrorPage(reply, 400, 'This link cannot be used', result.message);
    if (result.endSession) reply.clearCookie(names.session, attributes);
    if (result.kind === 'redirect') return seeOther(reply, result.location);
    return seeOther(reply, `/login?request=${encodeURIComponent(result.requestId)}`);
  });
}
