import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * A client's address as Connect counts it: parsed once, at the edge
 * ({@link clientAddressFrom}), and passed on as this value, never as the
 * string it arrived as.
 */
export interface ClientAddress {
  /**
   * The address in one spelling: IPv4 in dotted decimal (an IPv4-mapped
   * IPv6 address as its IPv4 address), IPv6 as RFC 5952 §4 writes it; no
   * port. For the audit log.
   */
  readonly ip: string;
  /**
   * What every per-address budget counts: an IPv4 address whole, an IPv6
   * address by its /64 network (`2001:db8:1:2::/64`), since one customer
   * line commonly holds a whole /64 and could otherwise spend a fresh
   * budget with every address of it.
   */
  readonly bucket: string;
}

/** The address of a request whose hops hold none (a peer on a Unix socket). */
const UNKNOWN: ClientAddress = Object.freeze({ ip: 'unknown', bucket: 'unknown' });

/**
 * Parses one hop as proxies and sockets write it: `v4`, `v4:port`, `v6` or
 * `[v6]:port`. Anything else (a name, an IPv4 address in another notation
 * such as `127.1`, garbage) is not an address: `undefined`.
 *
 * @example
 * parseClientAddress('[2001:DB8::1]:443'); // { ip: '2001:db8::1', bucket: '2001:db8:0:0::/64' }
 * parseClientAddress('::ffff:c633:6401');  // { ip: '198.51.100.1', bucket: '198.51.100.1' }
 */
export function parseClientAddress(hop: string): ClientAddress | undefined {
  const text = withoutPort(hop.trim());
  // node:net decides what is an address (four-part decimal IPv4, or IPv6); ipaddr.js reads it.
  if (text === undefined || isIP(text) === 0) return undefined;
  // A zone ID (`%eth0`, RFC 6874) names a link of the sender's, never another
  // network: dropped, in whatever spelling node:net accepted (ipaddr.js reads fewer).
  let parsed = ipaddr.parse(text.replace(/%.*$/s, ''));
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  if (parsed.kind() === 'ipv4') {
    const ip = parsed.toString();
    return { ip, bucket: ip };
  }
  const v6 = parsed as ipaddr.IPv6;
  return {
    ip: new ipaddr.IPv6(v6.parts).toRFC5952String(),
    bucket: `${v6.parts.slice(0, 4).map((part) => part.toString(16)).join(':')}::/64`,
  };
}

/** The hop without a port: `[v6]:port` and `v4:port` lose it; `undefined` when the brackets or the port are malformed. */
function withoutPort(hop: string): string | undefined {
  if (hop.startsWith('[')) {
    const match = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(hop);
    return match?.[1];
  }
  const colon = hop.indexOf(':');
  // One colon: IPv4 (or a name) with a port. More: IPv6, which only carries a port in brackets.
  if (colon !== -1 && colon === hop.lastIndexOf(':')) return /^\d{1,5}$/.test(hop.slice(colon + 1)) ? hop.slice(0, colon) : undefined;
  return hop;
}

/**
 * The client's address from the hops a request came through, the socket's
 * peer first, then the `X-Forwarded-For` hops from right to left up to and
 * including the right-most one not written by a trusted proxy (as Fastify's
 * `request.ips` lists them under `CONNECT_TRUST_PROXY`; just the peer
 * without). It is the last hop, parsed; a hop that is not an address is
 * counted as the address of the proxy that wrote it, the hop before it (so
 * the socket's peer, behind one proxy): garbage written by a client must
 * never be a fresh budget of its own.
 */
export function clientAddressFrom(hops: ReadonlyArray<string | undefined>): ClientAddress {
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hops[i];
    const address = hop === undefined ? undefined : parseClientAddress(hop);
    if (address) return address;
  }
  return UNKNOWN;
}
