import Fastify, { type FastifyInstance } from 'fastify';
import { ConfigError } from '../config/load.js';
import type { Metrics } from '../metrics/metrics.js';

/**
 * Serves the instance's metrics at `GET /metrics` (Prometheus text format)
 * on `host:port` (`CONNECT_METRICS_HOST`:`CONNECT_METRICS_PORT`), apart from the public listener (docs/operator-guide.md,
 * "Metrics"). A port already in use stops start-up with a message naming
 * `CONNECT_METRICS_PORT`. Closing it closes every connection at once, a
 * scrape half-sent included: a scraper retries, and a connection that
 * never finishes its request must not hold the instance's shutdown.
 */
export async function serveMetrics(metrics: Metrics, host: string, port: number): Promise<FastifyInstance> {
  const server = Fastify({ logger: false, forceCloseConnections: true, requestTimeout: 10_000 });
  server.get('/metrics', async (_request, reply) => {
    reply.header('content-type', metrics.registry.contentType).header('cache-control', 'no-store');
    return metrics.registry.metrics();
  });
  try {
    await server.listen({ host, port });
  } catch (error) {
    await server.close().catch(() => {});
    const code = (error as { code?: string }).code;
    if (code === 'EADDRINUSE') throw new ConfigError(`CONNECT_METRICS_PORT: port ${port} on ${host} is already in use`);
    if (code === 'EACCES') throw new ConfigError(`CONNECT_METRICS_PORT: no permission to listen on port ${port} of ${host}`);
    if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND' || code === 'EAI_AGAIN') {
      throw new ConfigError(`CONNECT_METRICS_HOST: ${JSON.stringify(host)} is not an address of this machine`);
    }
    throw error;
  }
  return server;
}
