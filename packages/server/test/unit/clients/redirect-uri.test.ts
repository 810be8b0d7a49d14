import { describe, expect, it } from 'vitest';
import { ClientSecretHasher } from '../../../src/core/clients/client-secret.js';
import type { Client } from '../../../src/core/clients/client.js';
import type { ClientPatch } from '../../../src/core/clients/client-store.js';
import { ClientValidationError, registerClient, updateClientSettings, validateRedirectUri } from '../../../src/core/clients/manage-clients.js';
import { fixedClock } from '../../../src/core/clock.js';
import type { Environment } from '../../../src/core/environment.js';
import { NotFound } from '../../../src/core/storage-errors.js';

/** `both`: the row holds in the sandbox and in production. */
type Where = Environment | 'both';

const ACCEPTED = 'accepted';

/**
 * Each row: the redirect URI as the operator typed it, the environment, and
 * either `accepted` (stored exactly as typed) or the refusal's message.
 */
const ROWS: ReadonlyArray<readonly [string, Where, typeof ACCEPTED | RegExp]> = [
  // https, as the URL standard writes it
  ['https://merchant.example/callback', 'both', ACCEPTED],
  ['https://merchant.example/callback?from=connect&x=1', 'both', ACCEPTED],
  ['https://merchant.example:8443/return/here', 'both', ACCEPTED],
  ['https://merchant.example/', 'both', ACCEPTED],
  ['https://merchant.example/cb/', 'both', ACCEPTED],
  ['https://merchant.example/Call/Back', 'both', ACCEPTED],
  ['https://xn--bcher-kva.example/cb', 'both', ACCEPTED],
  ['https://merchant.example/a%20b', 'both', ACCEPTED],
  ['https://merchant.example/cb%2e%2e', 'both', ACCEPTED],
  ['https://127.0.0.1/cb', 'both', ACCEPTED],
  ['https://localhost:3443/cb', 'both', ACCEPTED],
  ['https://merchant.example/cb?', 'both', ACCEPTED],

  // http: the sandbox's loopback hosts only, any port
  ['http://localhost/cb', 'sandbox', ACCEPTED],
  ['http://localhost:4000/callback', 'sandbox', ACCEPTED],
  ['http://127.0.0.1:4000/callback', 'sandbox', ACCEPTED],
  ['http://[::1]:8080/cb', 'sandbox', ACCEPTED],
  ['http://[::1]/cb', 'sandbox', ACCEPTED],
  ['http://localhost/cb', 'production', /must use https:\/\/ in production$/],
  ['http://127.0.0.1:4000/callback', 'production', /must use https:\/\/ in production$/],
  ['http://[::1]:8080/cb', 'production', /must use https:\/\/ in production$/],
  ['http://merchant.example/cb', 'production', /must use https:\/\/ in production$/],
  ['http://merchant.test/cb', 'sandbox', /http:\/\/ only on localhost, 127\.0\.0\.1 or \[::1\] \(sandbox\)/],
  ['http://127.0.0.2/cb', 'sandbox', /http:\/\/ only on localhost/],
  ['http://localhost.merchant.example/cb', 'sandbox', /http:\/\/ only on localhost/],
  ['http://localhost./cb', 'sandbox', /http:\/\/ only on localhost/],
  ['http://10.0.0.1/cb', 'sandbox', /http:\/\/ only on localhost/],

  // native apps: a reverse-domain private-use scheme and a path
  ['com.example.app:/callback', 'both', ACCEPTED],
  ['com.example.app:/oauth2/redirect?x=1', 'both', ACCEPTED],
  ['com.example.app://callback', 'both', ACCEPTED],
  ['com.example-shop.app2:/cb', 'both', ACCEPTED],
  ['com.example.app:callback', 'both', /must have a path after the scheme, e\.g\. com\.example\.app:\/callback$/],
  ['com.example.app:', 'both', /must have a path after the scheme/],
  ['com..app:/cb', 'both', /must be a reverse domain name/],
  ['com.example.:/cb', 'both', /must be a reverse domain name/],
  ['com+x.app:/cb', 'both', /must be a reverse domain name/],
  ['Com.Example.App:/cb', 'both', /standard form, com\.example\.app:\/cb /],
  ['com.example.app:/a/../cb', 'both', /standard form, com\.example\.app:\/cb /],
  ['com.example.app://user@host/cb', 'both', /must not contain user info/],

  // schemes that are neither
  ['myapp:/callback', 'production', /must use https:\/\/, or a native app's reverse-domain scheme/],
  ['myapp:/callback', 'sandbox', /must use https:\/\/ \(or, in the sandbox, http:\/\/localhost, http:\/\/127\.0\.0\.1 or http:\/\/\[::1\]\)/],
  ['javascript:alert(1)', 'both', /must use https:\/\//],
  ['data:text/html,hi', 'both', /must use https:\/\//],
  ['file:///etc/passwd', 'both', /must use https:\/\//],
  ['ftp://merchant.example/cb', 'both', /must use https:\/\//],
  ['wss://merchant.example/cb', 'both', /must use https:\/\//],

  // not an absolute URL, or no host
  ['/relative/path', 'both', /must be an absolute URL/],
  ['callback', 'both', /must be an absolute URL/],
  ['', 'both', /must be an absolute URL/],
  ['https://', 'both', /must be an absolute URL/],
  ['https:///evil.example/cb', 'both', /must have a host: https:\/\/host\/path$/],
  ['https:/evil.example/cb', 'both', /must have a host/],
  ['https:evil.example/cb', 'both', /must have a host/],
  ['http:///localhost/cb', 'sandbox', /must have a host: http:\/\/host\/path$/],
  ['https://?x=1', 'both', /must be an absolute URL|must have a host/],

  // fragments, wildcards, user info
  ['https://merchant.example/cb#frag', 'both', /must not contain a fragment/],
  ['https://merchant.example/cb#', 'both', /must not contain a fragment/],
  ['https://*.merchant.example/cb', 'both', /must not contain wildcards/],
  ['https://merchant.example/*', 'both', /must not contain wildcards/],
  ['https://user:pw@merchant.example/cb', 'both', /must not contain user info/],
  ['https://user@merchant.example/cb', 'both', /must not contain user info/],
  ['https://@merchant.example/cb', 'both', /must not contain user info/],
  ['https://evil.example@merchant.example/cb', 'both', /must not contain user info/],
  ['https://merchant.example/cb?next=a@b', 'both', ACCEPTED],

  // characters the parser would drop or rewrite silently
  ['https://merchant.example\\@evil.example/cb', 'both', /must not contain a backslash$/],
  ['https:\\\\evil.example/cb', 'both', /must not contain a backslash$/],
  ['https://merchant.example/cb\\..\\x', 'both', /must not contain a backslash$/],
  ['https://merchant.example/c\tb', 'both', /must not contain control characters/],
  ['https://merchant.example/cb\n', 'both', /must not contain control characters/],
  ['https://merchant.ex\r\nample/cb', 'both', /must not contain control characters/],
  ['\u0000https://merchant.example/cb', 'both', /must not contain control characters/],
  ['https://merchant.example/cb\u007f', 'both', /must not contain control characters/],
  ['https://merchant.example/cb\u0085', 'both', /must not contain control characters/],
  [' https://merchant.example/cb', 'both', /must not contain spaces or other whitespace/],
  ['https://merchant.example/cb ', 'both', /must not contain spaces or other whitespace/],
  ['https://merchant.example/a b', 'both', /must not contain spaces or other whitespace/],
  ['https://merchant.example/cb\u00a0', 'both', /must not contain spaces or other whitespace/],
  ['https://merchant.example/cb\u2028', 'both', /must not contain spaces or other whitespace/],
  ['https://merchant.example/cb\u3000', 'both', /must not contain spaces or other whitespace/],
  ['https://merchant.example/c\u200bb', 'both', /must not contain invisible formatting characters/],
  ['https://merchant.exa\u00admple/cb', 'both', /must not contain invisible formatting characters/],
  ['https://merchant.example/\u202ebc', 'both', /must not contain invisible formatting characters/],

  // forms the parser rewrites: refused, naming the form to register
  ['https://merchant.example', 'both', /standard form, https:\/\/merchant\.example\/ \(redirect URIs are compared character for character\): register that form$/],
  ['https://Merchant.Example/cb', 'both', /standard form, https:\/\/merchant\.example\/cb /],
  ['HTTPS://merchant.example/cb', 'both', /standard form, https:\/\/merchant\.example\/cb /],
  ['https://bücher.example/cb', 'both', /standard form, https:\/\/xn--bcher-kva\.example\/cb /],
  ['https://раураl.example/cb', 'both', /standard form, https:\/\/xn--.*\.example\/cb /],
  ['https://merchant.example:443/cb', 'both', /standard form, https:\/\/merchant\.example\/cb /],
  ['https://merchant.example:0443/cb', 'both', /standard form, https:\/\/merchant\.example\/cb /],
  ['http://localhost:80/cb', 'sandbox', /standard form, http:\/\/localhost\/cb /],
  ['http://[0:0::1]:4000/cb', 'sandbox', /standard form, http:\/\/\[::1\]:4000\/cb /],
  ['http://127.1/cb', 'sandbox', /standard form, http:\/\/127\.0\.0\.1\/cb /],
  ['http://LOCALHOST/cb', 'sandbox', /standard form, http:\/\/localhost\/cb /],
  ['https://0x7f.1/cb', 'both', /standard form, https:\/\/127\.0\.0\.1\/cb /],
  ['https://merchant.example/x/../cb', 'both', /standard form, https:\/\/merchant\.example\/cb /],
  ['https://merchant.example/x/./cb', 'both', /standard form, https:\/\/merchant\.example\/x\/cb /],
  ['https://merchant.example/x/%2e%2e/cb', 'both', /standard form, https:\/\/merchant\.example\/cb /],
  ['https://merchant.example/x/%2E%2e/cb', 'both', /standard form, https:\/\/merchant\.example\/cb /],
  ['https://merchant.example/x/.%2e/cb', 'both', /standard form, https:\/\/merchant\.example\/cb /],
  ['https://merchant.example/x/%2e/cb', 'both', /standard form, https:\/\/merchant\.example\/x\/cb /],
  ['https://merchant.example/ünïcode', 'both', /standard form, https:\/\/merchant\.example\/%C3%BCn%C3%AFcode /],
  ['https://merchant.example/cb?q=é', 'both', /standard form, https:\/\/merchant\.example\/cb\?q=%C3%A9 /],
  ['https://merchant.example/a"b', 'both', /standard form, https:\/\/merchant\.example\/a%22b /],
  ['https://merchant.example/a<b>', 'both', /standard form, https:\/\/merchant\.example\/a%3Cb%3E /],

  // length
  [`https://merchant.example/${'a'.repeat(1975)}`, 'both', ACCEPTED],
  [`https://merchant.example/${'a'.repeat(1976)}`, 'both', /at most 2000 characters/],
];

function environments(where: Where): Environment[] {
  return where === 'both' ? ['sandbox', 'production'] : [where];
}

const CASES = ROWS.flatMap(([uri, where, expected]) => environments(where).map((environment) => [JSON.stringify(uri), environment, uri, expected] as const));

describe('redirect URI rules', () => {
  it.each(CASES)('%s in %s', (_shown, environment, uri, expected) => {
    if (expected === ACCEPTED) {
      expect(validateRedirectUri(uri, environment)).toBe(uri);
      return;
    }
    let thrown: unknown;
    try {
      validateRedirectUri(uri, environment);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ClientValidationError);
    const message = (thrown as Error).message;
    expect(message).toMatch(expected);
    // One printable line that never repeats an unprintable character of the input.
    expect(message).toMatch(/^[\x20-\x7e]+$/);
  });

  it('every refusal names itself as a redirect URI problem', () => {
    for (const [, environment, uri, expected] of CASES) {
      if (expected === ACCEPTED) continue;
      expect(() => validateRedirectUri(uri, environment)).toThrow(/^redirect URI /);
    }
  });

  it('stores an accepted URI as typed, and a refused one neither at registration nor at an update', async () => {
    const clients = new Map<string, Client>();
    const deps = {
      environment: 'production' as const,
      clock: fixedClock(1000),
      hasher: new ClientSecretHasher(new Uint8Array(32).fill(3)),
      clients: {
        findClient: async (id: string) => clients.get(id),
        insertClient: async (c: Client) => void clients.set(c.id, c),
        updateClient: async (id: string, patch: ClientPatch, now: number) => {
          const c = clients.get(id);
          if (!c) throw new NotFound(id);
          const next = { ...c, ...patch, updatedAt: now } as Client;
          clients.set(id, next);
          return next;
        },
      },
    };
    await expect(registerClient({ name: 'Acme', redirectUri: 'https:///evil.example/cb' }, deps)).rejects.toThrow(/must have a host/);
    expect(clients.size).toBe(0);

    const { client } = await registerClient({ name: 'Acme', redirectUri: 'com.acme.app:/cb' }, deps);
    expect(clients.get(client.id)?.redirectUri).toBe('com.acme.app:/cb');
    await expect(updateClientSettings(client.id, { redirectUri: 'https://Acme.example/cb' }, deps)).rejects.toThrow(
      /standard form, https:\/\/acme\.example\/cb /,
    );
    await expect(updateClientSettings(client.id, { redirectUri: 'http://127.0.0.1:4000/cb' }, deps)).rejects.toThrow(/https:\/\/ in production/);
    expect(clients.get(client.id)?.redirectUri).toBe('com.acme.app:/cb');
    expect((await updateClientSettings(client.id, { redirectUri: 'https://acme.example/cb' }, deps)).redirectUri).toBe('https://acme.example/cb');
  });
});
