import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, onTestFinished } from 'vitest';
import { fixedClock } from '../../src/core/clock.js';
import { build, type TestApp } from '../helpers/build.js';
import {
  addCustomer,
  attribute,
  Browser,
  enterOtp,
  expectPage,
  expectSeeOther,
  inputTag,
  MOBILE,
  PIN,
  submitCredentials,
} from '../helpers/customer-flow.js';

/**
 * A Connect for the conformance suite: the app as the server builds it,
 * listening on a real port of 127.0.0.1, so that each OAuth library talks
 * to it over HTTP exactly as its users' code would, with its own HTTP
 * client. The customer's side of an authorization is a browser (the
 * hosted pages, with the one-time PIN from the sandbox outbox).
 */

/** The redirect URI of the conformance clients: a callback no request reaches (the test reads the redirect). */
export const CALLBACK = 'http://127.0.0.1/callback';

/** The scopes every conformance Connect lists in discovery (`CONNECT_SCOPES_SUPPORTED`). */
export const SCOPES_SUPPORTED = ['payments:read', 'payments:write', 'profile'] as const;

/** Client credentials with the redirect URI they were registered with. */
export interface ConformanceClient {
  readonly id: string;
  readonly secret: string;
  readonly redirectUri: string;
}

/** A running Connect and what a library test needs of it. */
export interface RunningConnect {
  readonly t: TestApp;
  /** `http://127.0.0.1:<port>` (with the path of `authPath`): the issuer, `{auth_url}` and `{base_url}`. */
  readonly issuer: string;
  /** Where Connect listens: `http://127.0.0.1:<port>`. */
  readonly origin: string;
  /** Registers a client with every grant (client credentials, code, refresh) and `scopes` (space-separated; default none). */
  createClient(options?: { redirectUri?: string; scopes?: string }): Promise<ConformanceClient>;
  /**
   * The customer's browser at an authorization URL a library built: logs
   * the customer in on the hosted pages (mobile, PIN, one-time PIN) unless
   * they are signed in at Connect already, answers the consent page when
   * Connect shows it (`approve` unless told otherwise), and answers the URL
   * Connect sends the browser back to (the callback, with `code`, `state`
   * and `iss`, or an `error`).
   */
  authorize(authorizationUrl: string | URL, options?: { consent?: 'approve' | 'cancel' }): Promise<URL>;
}

/**
 * One Connect for every test of a file (each test registers its own
 * client), closed when the file's tests are done. Call at the top of a
 * `describe`; the returned function gives the running Connect inside a test.
 */
export function sharedConnect(): () => RunningConnect {
  let connect: RunningConnect | undefined;
  let close: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    ({ connect, close } = await openConnect({}));
  });
  afterAll(async () => {
    await close?.();
  });
  return () => {
    if (!connect) throw new Error('Connect is not running: call sharedConnect() in a describe block');
    return connect;
  };
}

/**
 * Starts a Connect of its own for one test, closed when the test ends.
 *
 * @param options.authPath a path for the auth URL (`/auth`): Connect then
 *   believes it lives at `http://127.0.0.1:<port>/auth`.
 */
export async function startConnect(options: { authPath?: string } = {}): Promise<RunningConnect> {
  const { connect, close } = await openConnect(options);
  onTestFinished(close);
  return connect;
}

/**
 * Connect on in-memory SQLite with a clock fixed at the real time (the
 * libraries read the system clock), listening on a free port.
 */
async function openConnect(options: { authPath?: string }): Promise<{ connect: RunningConnect; close: () => Promise<void> }> {
  const t = await build({ clock: fixedClock(Math.floor(Date.now() / 1000)), closedByCaller: true, env: { CONNECT_SCOPES_SUPPORTED: SCOPES_SUPPORTED.join(' ') } });
  let origin: string;
  try {
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    origin = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  } catch (error) {
    await t.close();
    throw error;
  }
  const issuer = `${origin}${options.authPath ?? ''}`;
  // What the server does once it has bound its port and no URL was configured.
  t.services.urls.authUrl = issuer;
  t.services.urls.baseUrl = issuer;
  const browser = new Browser(t.app);
  // The customer (one scrypt hash) is created when a test first needs them.
  let customer: Promise<unknown> | undefined;

  const connect: RunningConnect = {
    t,
    issuer,
    origin,
    async createClient({ redirectUri = CALLBACK, scopes } = {}) {
      const { id, secret } = await t.createClient({
        name: 'Conformance',
        redirectUri,
        grants: ['client_credentials', 'authorization_code', 'refresh_token'],
        scopes,
      });
      return { id, secret, redirectUri };
    },
    async authorize(authorizationUrl, { consent = 'approve' } = {}) {
      const url = new URL(authorizationUrl);
      expect(url.origin).toBe(origin);
      await (customer ??= addCustomer(t));
      let res = await browser.get(`${url.pathname}${url.search}`);
      if (res.statusCode === 303 && String(res.headers.location).startsWith('/login?')) {
        expectSeeOther(res, /^\/login\?request=[A-Za-z0-9_-]{43}$/);
        const page = await browser.follow(res);
        expectPage(page, 200);
        // A read-only mobile field (user_id given) is posted as prefilled, as a browser does.
        const field = inputTag(page.body, 'mobile');
        const mobile = attribute(field, 'readonly') === undefined ? MOBILE : attribute(field, 'value');
        res = await enterOtp(browser, await submitCredentials(browser, page, mobile, PIN), MOBILE);
      }
      if (res.statusCode === 303 && String(res.headers.location).startsWith('/consent?')) {
        const page = await browser.follow(res);
        expectPage(page, 200);
        res = await browser.submit(page, { action: consent });
      }
      expect({ status: res.statusCode, body: res.body }).toEqual({ status: 303, body: '' });
      return new URL(String(res.headers.location));
    },
  };
  return { connect, close: () => t.close() };
}

/** `POST {issuer}/introspect` over HTTP Basic, for checks of what a library did (whether a token is still active). */
export async function introspect(connect: RunningConnect, client: ConformanceClient, token: string): Promise<Record<string, unknown>> {
  const res = await fetch(`${connect.origin}/introspect`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from(`${client.id}:${client.secret}`).toString('base64')}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams({ token }),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as Record<string, unknown>;
}
