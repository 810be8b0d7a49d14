import { createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Environment } from '../../core/environment.js';
import type { PublicUrls } from '../../core/tokens/public-urls.js';
import { servedDocument } from '../openapi/document.js';

/** How long caches may keep the description: it changes only with a new version or new URLs. */
const MAX_AGE_SECONDS = 3600;

/**
 * `GET /openapi.json`: the OpenAPI description of this server's endpoints
 * (docs/consumer-guide.md, "The OpenAPI description"), with its own URLs,
 * cacheable and revalidated by ETag.
 */
export async function openApiRoutes(app: FastifyInstance, deps: { urls: PublicUrls; environment: Environment }): Promise<void> {
  // Made once per pair of URLs: without CONNECT_AUTH_URL they are known only once the server listens.
  let served: { key: string; body: string; etag: string } | undefined;
  const current = () => {
    const key = `${deps.urls.authUrl} ${deps.urls.baseUrl}`;
    if (served?.key !== key) {
      const body = JSON.stringify(servedDocument(deps.urls, deps.environment));
      served = { key, body, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"` };
    }
    return served;
  };

  app.get('/openapi.json', async (request, reply) => {
    const { body, etag } = current();
    reply.header('cache-control', `public, max-age=${MAX_AGE_SECONDS}`).header('etag', etag);
    if (request.headers['if-none-match'] === etag) return reply.code(304).send();
    return reply.type('application/json; charset=utf-8').send(body);
  });
}
