import { createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { STYLESHEET } from '../views/styles.js';

/** `GET /assets/connect.css`: the hosted pages' stylesheet, cacheable and revalidated by ETag. */
export async function assetRoutes(app: FastifyInstance): Promise<void> {
  const etag = `"${createHash('sha256').update(STYLESHEET).digest('base64url').slice(0, 16)}"`;
  app.get('/assets/connect.css', async (request, reply) => {
    reply.header('cache-control', 'public, max-age=3600').header('etag', etag);
    if (request.headers['if-none-match'] === etag) return reply.code(304).send();
    return reply.type('text/css; charset=utf-8').send(STYLESHEET);
  });
}
