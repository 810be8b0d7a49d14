import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';

/**
 * Logs each request once, when its response is sent, as one flat line:
 *
 * `{"level":30,"time":…,"reqId":"req-1","method":"POST","path":"/token",
 * "remoteAddress":"127.0.0.1","statusCode":200,"responseTime":1.42,"msg":"request completed"}`
 *
 * The path never includes the query string, which may carry codes or mobile
 * numbers. Fastify's own request logging writes two lines ("incoming
 * request", "request completed") with nested `req`/`res` objects; one flat
 * line, written by Fastify's log controller rather than by an extra
 * `onResponse` hook, keeps logging cheap on the token endpoint's hot path
 * (bench/README.md). Fastify's other log lines (a response stream that
 * failed, a serializer that threw) stay as they are.
 */
export class RequestLogController extends LogController {
  override incomingRequest(_request: FastifyRequest, _reply: FastifyReply): void {
    // Nothing: the request is logged once, when it completes.
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    const line = {
      method: request.method,
      path: pathOf(request.url),
      remoteAddress: request.ip,
      statusCode: reply.statusCode,
      // Milliseconds, to the microsecond (Fastify measures it to the nanosecond).
      responseTime: Math.round(reply.elapsedTime * 1000) / 1000,
    };
    if (error) reply.log.error({ ...line, err: error }, 'request errored');
    else reply.log.info(line, 'request completed');
  }
}

function pathOf(url: string): string {
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}
