import { createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { RESEND_COUNTDOWN_PATH, RESEND_COUNTDOWN_SCRIPT } from '../views/scripts.js';
import { STYLESHEET } from '../views/styles.js';

/**
 * The hosted pages' static files, cacheable and revalidated by ETag:
 * `GET /assets/connect.css`, the stylesheet, and the one-time-PIN page's
 * countdown script (views/scripts.ts).
 */
export async function assetRoutes(app: FastifyInstance): Promise<void> {
  const asset = (path: string, type: string, body: string) => {
    const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 16)}"`;
    app.get(path, async (request, reply) => {
      reply.header('cache-control', 'public, max-age=3600').header('etag', etag);
      if (request.headers['if-none-match'] === etag) return reply.code(304).send();
      return reply.type(type).send(body);
    });
  };
  asset('/assets/connect.css', 'text/css; charset=utf-8', STYLESHEET);
  asset(RESEND_COUNTDOWN_PATH, 'text/javascript; charset=utf-8', RESEND_COUNTDOWN_SCRIPT);
}
