import type { FastifyRequest } from 'fastify';

/**
 * Every `DPoP` header of `request`, as sent, each on its own (Node joins
 * repeated headers into one value): a request with two is refused
 * (RFC 9449 §4.3; docs/resource-servers.md, "DPoP-bound tokens").
 */
export function dpopProofsOf(request: FastifyRequest): string[] {
  const raw = request.raw.rawHeaders;
  const proofs: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    // Only a four-letter name is lowercased to be compared: most requests have no `DPoP` header.
    const name = raw[i];
    if (name !== undefined && name.length === 4 && name.toLowerCase() === 'dpop') proofs.push(raw[i + 1] ?? '');
  }
  return proofs;
}

/** The path of `request` without its query: what a proof's `htu` names after the public URL's origin. */
export function pathOf(request: FastifyRequest): string {
  const url = request.raw.url ?? request.url;
  const end = url.search(/[?#]/);
  return end === -1 ? url : url.slice(0, end);
}
