import type { FastifyInstance } from 'fastify';
import { READINESS_TIMEOUT_MS } from '../../core/lifetimes.js';

/** What `/readyz` checks: each dependency by the name it reports, answering or throwing. */
export type ReadinessChecks = Readonly<Record<string, () => Promise<unknown>>>;

/**
 * `GET /healthz` (the process answers) and `GET /readyz` (the database, and
 * Redis when configured, answer within a second, and the instance is not
 * shutting down; docs/operator-guide.md, "Readiness and shutdown").
 */
export async function healthRoutes(
  app: FastifyInstance,
  deps: {
    checks: ReadinessChecks;
    /** True from the moment the server is told to stop (`SIGTERM`), while it still serves. */
    closing: () => boolean;
  },
): Promise<void> {
  app.get('/healthz', async (_request, reply) => {
    reply.header('cache-control', 'no-store');
    return { status: 'ok' };
  });

  app.get('/readyz', async (_request, reply) => {
    reply.header('cache-control', 'no-store');
    const failed = deps.closing()
      ? ['shutting_down']
      : (
          await Promise.all(
            Object.entries(deps.checks).map(async ([name, check]) => {
              // What failed is in the answer; the failure itself is counted in its outage (the checks report it).
              return (await answersWithin(check, READINESS_TIMEOUT_MS)) === undefined ? undefined : name;
            }),
          )
        ).filter((name): name is string => name !== undefined);
    if (failed.length === 0) return { status: 'ready' };
    return reply.code(503).send({ status: 'unavailable', failed, error_description: `not ready: ${failed.join(', ')}` });
  });
}

/** Runs `check`: `undefined` if it answered within `ms`, else why not. */
async function answersWithin(check: () => Promise<unknown>, ms: number): Promise<unknown> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<Error>((resolve) => {
    timer = setTimeout(() => resolve(new Error(`no answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([check().then(() => undefined, (error: unknown) => error ?? new Error('failed')), late]);
  } finally {
    clearTimeout(timer);
  }
}
