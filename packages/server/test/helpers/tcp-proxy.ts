import { createConnection, createServer, type Server, type Socket } from 'node:net';

/** A TCP proxy in front of a service, for cutting the connection to it in a test. */
export interface TcpProxy {
  /** The port to connect to instead of the service's. */
  readonly port: number;
  /** Breaks every open connection and refuses new ones, as when the service goes down. */
  cut(): Promise<void>;
  /**
   * Breaks every open connection; new ones are accepted but nothing is
   * forwarded either way, as when the service hangs.
   */
  stall(): Promise<void>;
  /**
   * Keeps every open connection open but forwards nothing more on it, either
   * way, and holds new ones the same: a silent loss, where nothing says the
   * connection is broken.
   */
  silence(): void;
  /**
   * Accepts and forwards connections on the same port again, as when a
   * partition heals: connections held by {@link stall} or {@link silence}
   * (and still open) go through now, with what was sent on them meanwhile.
   * With `abandon`, they stay silent for good, as when the partition
   * outlasted what the network keeps of a connection: only new connections
   * go through.
   */
  restore(options?: { abandon?: boolean }): Promise<void>;
  /** How many sockets (either side) are open now. */
  openSockets(): number;
  /**
   * How each connection from a client ended so far, in order: `reset` (a
   * TCP reset: the client's kernel dropped what it had not delivered) or
   * `closed` (a graceful close, after everything sent on it).
   */
  clientEnds(): ReadonlyArray<'reset' | 'closed'>;
  close(): Promise<void>;
}

/**
 * Starts a proxy on 127.0.0.1 that forwards to `host:port`; with
 * `latencyMs`, each chunk the client sends reaches the service that much
 * later (in order), as over a distant network.
 */
export async function startTcpProxy(target: { host: string; port: number }, options: { latencyMs?: number } = {}): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  const pairs = new Set<[Socket, Socket]>();
  /** Connections accepted while stalled, not forwarded yet. */
  const held = new Set<Socket>();
  const ends: Array<'reset' | 'closed'> = [];
  let stalled = false;
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  };
  const accept = (client: Socket) => {
    track(client);
    let reset = false;
    client.on('error', (error: NodeJS.ErrnoException) => void (reset ||= error.code === 'ECONNRESET'));
    client.on('close', () => ends.push(reset ? 'reset' : 'closed'));
    if (!stalled) return forward(client);
    held.add(client);
    client.pause();
    client.on('close', () => held.delete(client));
  };
  const forward = (client: Socket) => {
    const upstream = createConnection(target);
    track(upstream);
    if (options.latencyMs) {
      const latency = options.latencyMs;
      client.on('data', (chunk: Buffer) => void setTimeout(() => upstream.destroyed || upstream.write(chunk), latency));
      upstream.pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
      return;
    }
    client.pipe(upstream);
    upstream.pipe(client);
    const pair: [Socket, Socket] = [client, upstream];
    pairs.add(pair);
    client.on('close', () => {
      pairs.delete(pair);
      upstream.destroy();
    });
    upstream.on('close', () => client.destroy());
  };
  const listen = (port: number) =>
    new Promise<Server>((resolve, reject) => {
      const server = createServer(accept);
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve(server));
    });
  const stop = (server: Server) =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      for (const socket of sockets) socket.destroy();
    });

  let server: Server | undefined = await listen(0);
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the proxy has no TCP port');
  const port = address.port;
  return {
    port,
    async cut() {
      if (server) await stop(server);
      server = undefined;
    },
    async stall() {
      stalled = true;
      for (const socket of sockets) socket.destroy();
      server ??= await listen(port);
    },
    silence() {
      stalled = true;
      for (const [client, upstream] of pairs) {
        client.unpipe(upstream);
        upstream.unpipe(client);
        client.pause();
        upstream.pause();
      }
    },
    async restore(options = {}) {
      stalled = false;
      if (options.abandon) {
        // Left open, paused and unpiped: nothing more goes through them.
        for (const pair of pairs) pairs.delete(pair);
        held.clear();
      }
      for (const [client, upstream] of pairs) {
        client.pipe(upstream);
        upstream.pipe(client);
        client.resume();
        upstream.resume();
      }
      for (const client of held) {
        held.delete(client);
        if (!client.destroyed) forward(client);
      }
      server ??= await listen(port);
    },
    openSockets: () => sockets.size,
    clientEnds: () => [...ends],
    async close() {
      if (server) await stop(server);
      for (const socket of sockets) socket.destroy();
      server = undefined;
    },
  };
}

/** `url` with its host and port replaced by the proxy's. */
export function throughProxy(url: string, proxy: TcpProxy): string {
  const proxied = new URL(url);
  proxied.hostname = '127.0.0.1';
  proxied.port = String(proxy.port);
  return proxied.href;
}
