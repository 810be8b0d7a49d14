import { Agent, createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A small HTTP load balancer in front of `connect-auth serve` processes, as
 * operators run them (docs/operator-guide.md, "Readiness and shutdown"):
 * round-robin over the instances whose last `/readyz` check answered 200,
 * checked every {@link CHECK_INTERVAL_MS}; keep-alive connections to each;
 * a request whose connection an instance refuses goes to the next one (it
 * never reached the instance), as nginx's `proxy_next_upstream error` does.
 * Nothing else is retried, so every other failure reaches the client.
 */

/** How often each instance's `/readyz` is asked, and how long the answer may take. */
export const CHECK_INTERVAL_MS = 100;
const CHECK_TIMEOUT_MS = 1000;

/** One instance behind the balancer. */
interface Backend {
  readonly address: string;
  readonly label: string;
  readonly agent: Agent;
  ready: boolean;
  checking: boolean;
  served: number;
}

/** A running balancer. */
export interface Balancer {
  readonly url: string;
  /** Puts an instance behind the balancer; resolves once its `/readyz` said 200 and it takes requests. */
  add(address: string, label: string): Promise<void>;
  /** Takes an instance out (after it exited); how many requests it was given. */
  remove(address: string): number;
  /** The instances taking requests now, by label. */
  inRotation(): string[];
  close(): Promise<void>;
}

function isReady(backend: Backend): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request(new URL('/readyz', backend.address), { agent: backend.agent, timeout: CHECK_TIMEOUT_MS }, (res) => {
      res.resume();
      res.once('end', () => resolve(res.statusCode === 200));
      res.once('error', () => resolve(false));
    });
    req.once('timeout', () => req.destroy());
    req.once('error', () => resolve(false));
    req.end();
  });
}

/** Starts a balancer on a free loopback port, with no instance yet. */
export async function startBalancer(): Promise<Balancer> {
  const backends: Backend[] = [];
  let next = 0;
  const checks = setInterval(() => {
    for (const backend of backends) {
      if (backend.checking) continue;
      backend.checking = true;
      void isReady(backend).then((ready) => {
        backend.checking = false;
        backend.ready = ready;
      });
    }
  }, CHECK_INTERVAL_MS);

  /** Forwards the request, its body already read, to the next ready instance; another one if this one refuses the connection. */
  const forward = (req: IncomingMessage, body: Buffer, res: ServerResponse, tried: Set<Backend>): void => {
    const ready = backends.filter((b) => b.ready && !tried.has(b));
    const backend = ready[next++ % Math.max(ready.length, 1)];
    if (!backend) {
      res.writeHead(503).end('no instance ready');
      return;
    }
    tried.add(backend);
    const upstream = request(
      new URL(req.url ?? '/', backend.address),
      { method: req.method, headers: { ...req.headers, host: new URL(backend.address).host, connection: 'keep-alive' }, agent: backend.agent },
      (answer) => {
        backend.served += 1;
        const headers = { ...answer.headers };
        delete headers.connection;
        res.writeHead(answer.statusCode ?? 502, headers);
        answer.pipe(res);
      },
    );
    upstream.once('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'ECONNREFUSED') {
        backend.ready = false;
        forward(req, body, res, tried);
      } else if (!res.headersSent) res.writeHead(502).end(`upstream ${backend.label}: ${error.code ?? error.message}`);
      else res.destroy();
    });
    upstream.end(body);
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.once('end', () => forward(req, Buffer.concat(chunks), res, new Set()));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    async add(address, label) {
      const backend: Backend = { address, label, agent: new Agent({ keepAlive: true }), ready: false, checking: false, served: 0 };
      backends.push(backend);
      const deadline = performance.now() + 30_000;
      while (!backend.ready) {
        if (performance.now() > deadline) throw new Error(`${label} at ${address}: /readyz not 200 within 30 s`);
        await new Promise((resolve) => setTimeout(resolve, CHECK_INTERVAL_MS / 2));
      }
    },
    remove(address) {
      const at = backends.findIndex((b) => b.address === address);
      const [backend] = at === -1 ? [] : backends.splice(at, 1);
      backend?.agent.destroy();
      return backend?.served ?? 0;
    },
    inRotation: () => backends.filter((b) => b.ready).map((b) => b.label),
    async close() {
      clearInterval(checks);
      for (const backend of backends.splice(0)) backend.agent.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
