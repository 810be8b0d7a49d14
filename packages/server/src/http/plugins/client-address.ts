import type { FastifyRequest } from 'fastify';
import { clientAddressFrom, type ClientAddress } from '../../core/client-address.js';

/**
 * The request's client address, parsed (`core/client-address.ts`): under
 * `CONNECT_TRUST_PROXY` from the hops Fastify lists in `request.ips` (the
 * socket's peer, then `X-Forwarded-For` from right to left up to the
 * right-most untrusted hop), otherwise the socket's peer. Every
 * per-address budget counts what this returns.
 */
export function clientAddressOf(request: FastifyRequest): ClientAddress {
  return clientAddressFrom(request.ips ?? [request.socket.remoteAddress]);
}
