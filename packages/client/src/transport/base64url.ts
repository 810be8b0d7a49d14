/** base64url without padding (RFC 4648 §5), as PKCE and JWTs use it. */
export function encodeBase64Url(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** Decodes base64url (padded or not) to UTF-8 text; throws on characters outside the alphabet. */
export function decodeBase64UrlText(value: string): string {
  if (!/^[A-Za-z0-9_-]*={0,2}$/.test(value)) throw new TypeError('not base64url');
  const base64 = value.replace(/=+$/, '').replace(/-/g, '+').replace(/_/g, '/');
  const binary = atob(base64.padEnd(Math.ceil(base64.length / 4) * 4, '='));
  const bytes = Uint8Array.from(binary, (c) => c.charCodeAt(0));
  return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
}
