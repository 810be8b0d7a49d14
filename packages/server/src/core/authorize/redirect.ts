/**
 * Adds parameters to a redirect URI, keeping any query it already has
 * (RFC 6749 §3.1.2) and never touching anything else of it.
 */
export function buildRedirect(redirectUri: string, params: Record<string, string | null | undefined>): string {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(params)) {
    if (value !== null && value !== undefined) url.searchParams.append(name, value);
  }
  return url.href;
}
