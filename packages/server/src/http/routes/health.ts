import type { FastifyInstance } from 'fastify';
import type { Storage } from '../../storage/ports.js';

/** `GET /healthz` (the process answers) and `GET /readyz` (the database answers too). */
export async function healthRoutes(app: FastifyInstance, deps: { storage: Pick<Storage, 'ping'> }): Promise<void> {
  app.get('/healthz', async (_request, reply) => {
    reply.header('cache-control', 'no-store');
    return { status: 'ok' };
  });

  app.get('/readyz', async (request, reply) => {
    reply.header('cache-control', 'no-store');
    try {
      await deps.storage.ping();
      return { status: 'ready' };
    } catch (error) {
      request.log.warn({ err: error }, 'database not reachable');
      return reply.code(503).send({ status: 'unavailable', error_description: 'database not reachable' });
    }
  });
}
