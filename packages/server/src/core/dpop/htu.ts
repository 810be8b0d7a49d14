/**
 * The form of a URL that a DPoP proof's `htu` is compared in (RFC 9449
 * §4.3, RFC 3986 §6.2.2 and §6.2.3): scheme and host in lower case, the
 * default port dropped, an empty path as `/`, without query and fragment.
 * `undefined` for anything that is not an absolute `http(s)` URL.
 *
 * @example
 * normalizeHtu('HTTPS://Auth.Example:443/token?x=1') // 'https://auth.example/token'
 */
export function normalizeHtu(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return undefined;
  if (parsed.username !== '' || parsed.password !== '') return undefined;
  // URL already lower-cases scheme and host, drops the default port, and writes an empty path as '/'.
  return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
}
