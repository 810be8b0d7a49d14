import { once } from 'node:events';
import { connect as netConnect, type Socket } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';

/**
 * Raw HTTP/1.1 over a TCP connection the test opens itself, so that it
 * decides when the connection is opened and when each byte of a request is
 * sent (a request held half sent, a connection open with nothing sent).
 */
export class RawConnection {
  #received = '';
  #closed = false;
  #error: string | undefined;
  readonly closed: Promise<void>;

  private constructor(readonly socket: Socket) {
    socket.setEncoding('latin1').on('data', (chunk: string) => (this.#received += chunk));
    socket.on('error', (error: NodeJS.ErrnoException) => (this.#error = error.code ?? error.message));
    this.closed = new Promise<void>((resolve) => socket.once('close', () => resolve())).then(() => void (this.#closed = true));
  }

  /** Opens a connection to the host and port of `url`; resolves once it is established. */
  static async open(url: string): Promise<RawConnection> {
    const { hostname, port } = new URL(url);
    const socket = netConnect(Number(port), hostname);
    await once(socket, 'connect');
    return new RawConnection(socket);
  }

  get isClosed(): boolean {
    return this.#closed;
  }

  write(text: string): void {
    this.socket.write(text);
  }

  /** Waits for the next whole response (by `Content-Length`) and returns its status, headers (lower case) and body. */
  async response(timeoutMs = 10_000): Promise<{ status: number; headers: string; body: string }> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const end = this.#received.indexOf('\r\n\r\n');
      if (end !== -1) {
        const headers = this.#received.slice(0, end);
        const length = Number(/\r\ncontent-length: *(\d+)/i.exec(headers)?.[1] ?? NaN);
        if (this.#received.length >= end + 4 + length) {
          const body = this.#received.slice(end + 4, end + 4 + length);
          this.#received = this.#received.slice(end + 4 + length);
          return { status: Number(headers.split(' ')[1]), headers: headers.toLowerCase(), body };
        }
      }
      if (this.#closed) {
        throw new Error(`the connection closed (${this.#error ?? 'by the server'}) before a whole response; received: ${JSON.stringify(this.#received)}`);
      }
      if (Date.now() > deadline) throw new Error(`no whole response within ${timeoutMs} ms; received: ${JSON.stringify(this.#received)}`);
      await delay(10);
    }
  }
}

/** The text of an HTTP/1.1 request to `url` (its path and query) with the given headers and body. */
export function rawRequest(method: string, url: string, headers: Record<string, string> = {}, body = ''): string {
  const { host, pathname, search } = new URL(url);
  const lines = [`${method} ${pathname}${search} HTTP/1.1`, `Host: ${host}`, ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`)];
  if (body || method === 'POST') lines.push(`Content-Length: ${Buffer.byteLength(body)}`);
  return `${lines.join('\r\n')}\r\n\r\n${body}`;
}

/** What a new connection to `url` gets now: `connected`, or the error code (`ECONNREFUSED`). */
export function connectOutcome(url: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise<string>((resolve) => {
    const socket = netConnect(Number(port), hostname);
    socket.once('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
  });
}

/** Resolves once a new connection to `url` is refused; fails past `timeoutMs`. */
export async function refusesConnections(url: string, timeoutMs = 2000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const outcome = await connectOutcome(url);
    if (outcome === 'ECONNREFUSED') return;
    if (Date.now() > deadline) throw new Error(`new connections still ${outcome} after ${timeoutMs} ms`);
    await delay(10);
  }
}
