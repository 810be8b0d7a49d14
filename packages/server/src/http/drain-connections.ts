import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/**
 * How long, once the listener closed, a connection that has sent nothing
 * yet may still send its first request before it is closed.
 */
export const FIRST_REQUEST_WINDOW_MS = 2000;

/** What the server knows of one accepted connection. */
interface Connection {
  /** Requests read on it whose response has not ended. */
  unanswered: number;
  /** Whether a response on it has ended. */
  served: boolean;
  /** `socket.bytesRead` when its last response ended: a connection that read more since is sending a request. */
  bytesAnswered: number;
}

/**
 * Makes `server.close()` close only connections with nothing left to
 * answer (docs/operator-guide.md, "Readiness and shutdown").
 *
 * Node's `close()` closes every connection it considers idle, and a
 * connection whose request the kernel has received but Node has not read
 * yet is idle to it: that request, sent before the listener closed, would be
 * cut off with a reset. Here a closing server closes at once only a
 * connection that was answered and has not sent a byte since; a connection
 * that has sent nothing yet gets {@link FIRST_REQUEST_WINDOW_MS} to send
 * its first request; one with a request under way is left to finish (its
 * response carries `Connection: close`, so it ends with that response).
 * The shutdown grace (`CONNECT_SHUTDOWN_GRACE`) bounds what is left.
 *
 * Call it before the server listens.
 */
export function drainConnections(server: Server, firstRequestWindowMs = FIRST_REQUEST_WINDOW_MS): void {
  const connections = new Map<Socket, Connection>();
  server.on('connection', (socket: Socket) => {
    connections.set(socket, { unanswered: 0, served: false, bytesAnswered: 0 });
    socket.once('close', () => connections.delete(socket));
  });
  // One listener for every response, not one made for each: this runs on every request.
  function responseClosed(this: ServerResponse) {
    const socket = this.req.socket;
    const connection = connections.get(socket);
    if (!connection) return;
    connection.unanswered -= 1;
    connection.served = true;
    connection.bytesAnswered = socket.bytesRead;
  }
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    const connection = connections.get(request.socket);
    if (!connection) return;
    connection.unanswered += 1;
    // A response closes once.
    response.on('close', responseClosed);
  });

  /** Closes the connections with nothing to answer: answered ones at once, silent new ones once their window is over. */
  const closeQuiet = (windowOver: boolean) => {
    for (const [socket, connection] of connections) {
      const sending = socket.bytesRead > connection.bytesAnswered;
      if (connection.unanswered === 0 && !sending && (connection.served || windowOver)) socket.destroy();
    }
  };
  // Each pass runs in the check phase (`setImmediate`), after the event
  // loop's poll phase has read whatever the kernel already holds: a request
  // that has arrived is counted as sending, even when the loop was busy.
  let closing = false;
  server.closeIdleConnections = () => {
    if (closing) return;
    closing = true;
    setImmediate(() => closeQuiet(false));
    setTimeout(() => setImmediate(() => closeQuiet(true)), firstRequestWindowMs).unref();
  };
}

/**
 * Resolves once the connections waiting in the kernel's accept queue have
 * been accepted, so that closing the listener resets none of them: their
 * clients have connected and may have sent a request already. Node accepts
 * one connection per turn of the event loop; this waits turn by turn until
 * a turn accepts none, at most `maxMs` (under a steady stream of new
 * connections it would never end).
 */
export async function acceptQueuedConnections(server: Server, maxMs = 1000): Promise<void> {
  let accepted = true;
  const onConnection = () => void (accepted = true);
  server.on('connection', onConnection);
  const until = performance.now() + maxMs;
  try {
    while (accepted && performance.now() < until) {
      accepted = false;
      // The next check phase comes after a poll phase, where a queued connection is accepted.
      await new Promise((resolve) => setImmediate(resolve));
    }
  } finally {
    server.off('connection', onConnection);
  }
}
