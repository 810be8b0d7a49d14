import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A plain node:http server on 127.0.0.1 standing in for Connect (or a proxy in front of it). */
export interface LocalServer {
  readonly url: string;
  /** Requests received, in order. */
  readonly requests: Array<{ method: string; path: string; headers: IncomingMessage['headers']; body: string }>;
  close(): Promise<void>;
}

/** Handles one request; `n` counts from 1. */
export type LocalHandler = (request: IncomingMessage & { body: string }, response: ServerResponse, n: number) => void | Promise<void>;

/** Starts a local server on a free port. `close()` also drops connections left hanging on purpose. */
export async function startLocalServer(handler: LocalHandler): Promise<LocalServer> {
  const requests: LocalServer['requests'] = [];
  const server = createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => (body += chunk));
    request.on('end', () => {
      requests.push({ method: request.method ?? '', path: request.url ?? '', headers: request.headers, body });
      Promise.resolve(handler(Object.assign(request, { body }), response, requests.length)).catch((error: unknown) => {
        response.destroy(error as Error);
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Forwards a received request to `target` and writes the answer back. */
export async function forward(target: string, request: IncomingMessage & { body: string }, response: ServerResponse): Promise<void> {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (typeof value === 'string' && !['host', 'connection', 'content-length'].includes(name)) headers.set(name, value);
  }
  const method = request.method ?? 'GET';
  const answer = await fetch(`${target}${request.url ?? '/'}`, {
    method,
    headers,
    ...(method === 'GET' || method === 'HEAD' ? {} : { body: request.body }),
    redirect: 'manual',
  });
  const body = await answer.text();
  const out: Record<string, string> = {};
  answer.headers.forEach((value, name) => {
    if (!['content-length', 'content-encoding', 'transfer-encoding', 'connection'].includes(name)) out[name] = value;
  });
  response.writeHead(answer.status, out).end(body);
}

/** Sends a JSON answer. */
export function sendJson(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  response.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers }).end(JSON.stringify(body));
}
