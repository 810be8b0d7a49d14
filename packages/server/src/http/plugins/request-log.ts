import type { FastifyInstance } from 'fastify';

/**
 * Logs each request once, when its response is sent, as one flat line:
 *
 * `{"level":30,"time":…,"reqId":"req-1","method":"POST","path":"/token",
 * "remoteAddress":"127.0.0.1","statusCode":200,"responseTime":1.42,"msg":"request completed"}`
 *
 * The path never includes the query string, which may carry codes or mobile
 * numbers. One line instead of Fastify's two ("incoming request", "request
 * completed"), with flat fields instead of nested `req`/`res` objects, keeps
 * logging cheap on the token endpoint's hot path (bench/README.md).
 */
export function logRequests(app: FastifyInstance): void {
  app.addHook('onResponse', (request, reply, done) => {
    request.log.info(
      {
        method: request.method,
        path: pathOf(request.url),
        remoteAddress: request.ip,
        statusCode: reply.statusCode,
        responseTime: reply.elapsedTime,
      },
      'request completed',
    );
    done();
  });
}

function pathOf(url: string): string {
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}
