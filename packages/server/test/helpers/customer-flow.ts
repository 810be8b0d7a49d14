import { randomBytes } from 'node:crypto';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import { s256Challenge } from '../../src/core/authorize/pkce.js';
import type { Customer } from '../../src/core/customers/customer.js';
import { checkNewPin, createCustomer } from '../../src/core/customers/manage-customers.js';
import { cachedPinHash } from './pin-hash.js';
import { basicAuth, form, TEST_AUTH_URL, type TestApp } from './build.js';
import { postToken, type Credentials } from './wire.js';

/**
 * Drives the customer side of the authorization through `inject()`, the way
 * a browser with JavaScript off would: a cookie jar, 303s followed within
 * the app, forms posted with the `csrf_token` they carry, and the one-time
 * PIN read from the sandbox outbox.
 */

export type Response = LightMyRequestResponse;

/** The mobile and PIN of the customer most tests log in as. */
export const MOBILE = '+639171234567';
export const PIN = '482613';
/** `userId` of {@link MOBILE}: country code and last 4 digits visible. */
export const MASKED_MOBILE = '+63******4567';
/** Another valid Philippine mobile number, not registered unless a test does it. */
export const OTHER_MOBILE = '+639181234321';

/** A form body: pairs keep order and allow repeats; a string or bytes are sent as they are. */
export type FormBody = Record<string, string> | ReadonlyArray<readonly [string, string]> | string | Buffer;

/** How a {@link Browser} reaches the app. */
export interface BrowserOptions {
  /** The client address its requests come from (`request.ip`); default `inject()`'s 127.0.0.1. */
  readonly remoteAddress?: string;
  /** The `Accept-Language` it sends with every request, as a browser does; default none. */
  readonly acceptLanguage?: string;
}

/** A browser: one cookie jar, requests through `inject()`. */
export class Browser {
  /** Cookies by name, as the app set them. */
  readonly cookies = new Map<string, string>();
  /** Every `Set-Cookie` the app sent, in order. */
  readonly setCookies: Array<Response['cookies'][number]> = [];

  constructor(
    readonly app: FastifyInstance,
    readonly options: BrowserOptions = {},
  ) {}

  /**
   * The same browser (a copy of its cookies, the same address) talking to
   * another instance of the app, as behind a load balancer.
   */
  via(app: FastifyInstance): Browser {
    const other = new Browser(app, this.options);
    for (const [name, value] of this.cookies) other.cookies.set(name, value);
    return other;
  }

  async request(options: {
    method: 'GET' | 'POST';
    url: string;
    body?: FormBody;
    contentType?: string;
    headers?: Record<string, string>;
  }): Promise<Response> {
    const headers: Record<string, string> = { ...(this.options.acceptLanguage === undefined ? {} : { 'accept-language': this.options.acceptLanguage }), ...options.headers };
    const cookie = [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    if (cookie) headers.cookie = cookie;
    let payload: string | Buffer | undefined;
    if (options.body !== undefined) {
      payload = typeof options.body === 'string' || Buffer.isBuffer(options.body) ? options.body : form(options.body);
      headers['content-type'] = options.contentType ?? 'application/x-www-form-urlencoded';
    }
    const res = await this.app.inject({
      method: options.method,
      url: options.url,
      headers,
      ...(payload === undefined ? {} : { payload }),
      ...(this.options.remoteAddress === undefined ? {} : { remoteAddress: this.options.remoteAddress }),
    });
    for (const set of res.cookies) {
      this.setCookies.push(set);
      const expired = set.value === '' || (set.maxAge !== undefined && set.maxAge <= 0) || (set.expires !== undefined && set.expires.getTime() <= Date.now());
      if (expired) this.cookies.delete(set.name);
      else this.cookies.set(set.name, set.value);
    }
    return res;
  }

  get(url: string): Promise<Response> {
    return this.request({ method: 'GET', url });
  }

  post(url: string, body: FormBody): Promise<Response> {
    return this.request({ method: 'POST', url, body });
  }

  /** Follows 303s to the app's own pages; stops at a page or at a redirect out of the app. */
  async follow(res: Response): Promise<Response> {
    let current = res;
    for (let hops = 0; current.statusCode === 303; hops++) {
      const location = String(current.headers.location);
      if (!location.startsWith('/')) return current;
      if (hops >= 5) throw new Error(`too many redirects, at ${location}`);
      current = await this.get(location);
    }
    return current;
  }

  /** GET and follow. */
  async open(url: string): Promise<Response> {
    return this.follow(await this.get(url));
  }

  /**
   * Submits the form of `page` (an HTML response) the way the browser
   * would: to its `action`, with its `csrf_token` and `fields`. Not followed.
   */
  submit(page: Response, fields: Record<string, string>): Promise<Response> {
    return this.post(formAction(page.body), { csrf_token: csrfToken(page.body), ...fields });
  }
}

/**
 * Follows `res` when it leads to the consent page (a session meeting a
 * client the customer has not approved) and approves the client there;
 * otherwise returns `res` as it is.
 */
export async function approveIfAsked(browser: Browser, res: Response): Promise<Response> {
  if (res.statusCode !== 303 || !String(res.headers.location).startsWith('/consent?')) return res;
  const page = await browser.follow(res);
  expectPage(page, 200);
  return browser.submit(page, { action: 'approve' });
}

/** `/authorize?…` from parameters; `undefined` ones are left out. */
export function authorizeUrl(params: Record<string, string | undefined>): string {
  const defined = Object.entries(params).filter((entry): entry is [string, string] => entry[1] !== undefined);
  return `/authorize?${new URLSearchParams(defined).toString()}`;
}

/** The usual authorization request of `client`. */
export function authorizeParams(
  client: { id: string; redirectUri?: string },
  extra: Record<string, string | undefined> = {},
): Record<string, string | undefined> {
  return { response_type: 'code', client_id: client.id, redirect_uri: client.redirectUri ?? REDIRECT_URI, state: 'xyz-state', ...extra };
}

/** The redirect URI `createClient()` registers by default. */
export const REDIRECT_URI = 'https://acme.example/callback';

/** The `<input>` (or `<button>`) tag with `name` and, when given, `value`, or `undefined`. */
export function findTag(html: string, tag: 'input' | 'button', name: string, value?: string): string | undefined {
  const tags = html.match(new RegExp(`<${tag}\\b[^>]*>`, 'g')) ?? [];
  return tags.find((t) => attribute(t, 'name') === name && (value === undefined || attribute(t, 'value') === value));
}

/** The `<input name=…>` tag; fails the test when there is none. */
export function inputTag(html: string, name: string): string {
  const tag = findTag(html, 'input', name);
  expect(tag, `an <input name="${name}">`).toBeDefined();
  return tag as string;
}

/** An attribute of a tag: its (unescaped) value, `''` when it has none, `undefined` when absent. */
export function attribute(tag: string, name: string): string | undefined {
  const match = new RegExp(`\\s${name}(?:="([^"]*)")?(?=[\\s>])`).exec(tag);
  if (!match) return undefined;
  return unescapeHtml(match[1] ?? '');
}

/** The hidden `csrf_token` of a page. */
export function csrfToken(html: string): string {
  const token = attribute(inputTag(html, 'csrf_token'), 'value');
  expect(attribute(inputTag(html, 'csrf_token'), 'type')).toBe('hidden');
  expect(token).toMatch(/^\S{20,}$/);
  return token as string;
}

/** The `action` of the page's form. */
export function formAction(html: string): string {
  const match = /<form\b[^>]*>/.exec(html);
  expect(match, 'a <form>').not.toBeNull();
  const action = attribute(match?.[0] ?? '', 'action');
  expect(action).toMatch(/^\//);
  return action as string;
}

/** The page's visible text, tags stripped and whitespace collapsed. */
export function pageText(html: string): string {
  return unescapeHtml(html.replace(/<[^>]*>/g, ' ')).replace(/\s+/g, ' ').trim();
}

function unescapeHtml(value: string): string {
  return value
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;|&#x27;/g, "'")
    .replace(/&amp;/g, '&');
}

/** The pending request ID in a hosted page URL (`?request=`). */
export function requestIdOf(url: string): string {
  const id = new URL(url, TEST_AUTH_URL).searchParams.get('request');
  expect(id).toMatch(/^[A-Za-z0-9_-]{43}$/);
  return id as string;
}

/** Signs of an internal error leaking out: stack frames, source paths, error class names. */
export const LEAK = /\bat \S+ \(|\/work\/|node_modules|[\w-]+\.(?:[cm]?[jt]s)\b|\b(?:Type|Syntax|Range|Reference)?Error:/;

/** A page without its references to Connect's own static files (`/assets/…`), whose names are no leak. */
export function withoutAssets(body: string): string {
  return body.replace(/ (?:src|href)="\/assets\/[\w-]+\.(?:js|css)"/g, '');
}

/** A hosted HTML page: its status, no redirect, never cached, nothing internal in it. */
export function expectPage(res: Response, status: number): void {
  expect({ status: res.statusCode, location: res.headers.location }).toEqual({ status, location: undefined });
  expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
  expect(res.headers['cache-control']).toBe('no-store');
  expect(res.body).toMatch(/^<!doctype html>/i);
  expect(withoutAssets(res.body)).not.toMatch(LEAK);
}

/** A 303 to one of the app's own pages; returns its path. */
export function expectSeeOther(res: Response, path: RegExp): string {
  expect({ status: res.statusCode, body: res.body }).toEqual({ status: 303, body: '' });
  const location = String(res.headers.location);
  expect(location).toMatch(path);
  return location;
}

/**
 * A 303 back to the client at `redirectUri` with a code and no error:
 * returns the parameters sent. Every redirect back carries `iss` (RFC
 * 9207); the redirect URI's own query, if any, comes first and unchanged.
 * An error sent back: {@link expectErrorRedirect}.
 */
export function expectClientRedirect(res: Response, redirectUri: string = REDIRECT_URI): URLSearchParams {
  const params = redirectBack(res, redirectUri);
  expect(params.get('error'), `${String(res.headers.location)} carries no error`).toBeNull();
  expect(params.get('code')).toMatch(/^[A-Za-z0-9_-]{43}$/);
  return params;
}

/** A `303` back to `redirectUri` with Connect's `iss`: its query, whatever it answers. */
function redirectBack(res: Response, redirectUri: string): URLSearchParams {
  expect({ status: res.statusCode, body: res.body }).toEqual({ status: 303, body: '' });
  const location = String(res.headers.location);
  const sep = redirectUri.includes('?') ? '&' : '?';
  expect(location.startsWith(`${redirectUri}${sep}`), `${location} starts with ${redirectUri}${sep}`).toBe(true);
  const params = new URL(location).searchParams;
  expect(params.get('iss')).toBe(TEST_AUTH_URL);
  return params;
}

/** An error redirect: `error`, `error_description`, `state` (when sent) and `iss`, nothing else. */
export function expectErrorRedirect(res: Response, error: string, state: string | null, redirectUri: string = REDIRECT_URI): string {
  const params = redirectBack(res, redirectUri);
  const own = new Set(new URL(redirectUri).searchParams.keys());
  const sent = [...params.keys()].filter((name) => !own.has(name)).sort();
  expect(sent).toEqual(state === null ? ['error', 'error_description', 'iss'] : ['error', 'error_description', 'iss', 'state']);
  expect(params.get('error')).toBe(error);
  expect(params.get('state')).toBe(state);
  const description = params.get('error_description') ?? '';
  // RFC 6749 §4.1.2.1: error_description is printable ASCII without " and \.
  expect(description).toMatch(/^[\x20-\x21\x23-\x5b\x5d-\x7e]+$/);
  return description;
}

/**
 * Creates a customer straight through core. The PIN must be one a customer
 * may choose, unless `chosenBeforeTheRules`:
 * then it is stored as an account that predates the weak-PIN rules would have it.
 */
export async function addCustomer(t: TestApp, mobile: string = MOBILE, pin: string = PIN, options: { chosenBeforeTheRules?: boolean } = {}): Promise<Customer> {
  if (!options.chosenBeforeTheRules) checkNewPin(pin);
  const { customer } = await createCustomer({ mobile, pin, pinHash: await cachedPinHash(pin) }, { customers: t.storage.customers, clock: t.clock });
  return customer;
}

/** The `i`-th of many valid Philippine mobile numbers (`+63917555` and 4 digits), for tests that need many customers. */
export function nthMobile(i: number): string {
  return `+63917555${String(i).padStart(4, '0')}`;
}

/**
 * Creates a customer for each mobile, all with `pin`, hashing it once (a
 * test that needs twenty customers need not wait for twenty scrypt hashes).
 */
export async function addCustomers(t: TestApp, mobiles: readonly string[], pin: string = PIN): Promise<Customer[]> {
  const pinHash = await cachedPinHash(pin);
  const customers: Customer[] = [];
  for (const mobile of mobiles) {
    const { customer } = await createCustomer({ mobile, pin, pinHash }, { customers: t.storage.customers, clock: t.clock });
    customers.push(customer);
  }
  return customers;
}

/** The newest messages the sandbox outbox holds for `mobile`. */
export async function outbox(app: FastifyInstance, mobile: string): Promise<Array<{ to: string; body: string; sentAt: string }>> {
  const res = await app.inject({ method: 'GET', url: `/sandbox/messages?to=${encodeURIComponent(mobile)}` });
  expect(res.statusCode).toBe(200);
  return res.json<{ messages: Array<{ to: string; body: string; sentAt: string }> }>().messages;
}

/** The one-time PIN of the newest SMS to `mobile`. */
export async function latestOtp(app: FastifyInstance, mobile: string): Promise<string> {
  const [newest] = await outbox(app, mobile);
  expect(newest, `an SMS to ${mobile}`).toBeDefined();
  const code = /\b(\d{6})\b/.exec(newest?.body ?? '')?.[1];
  expect(code).toMatch(/^\d{6}$/);
  return code as string;
}

/** A 6-digit code that is not `code`. */
export function wrongOtp(code: string): string {
  return String((Number(code) + 1) % 1_000_000).padStart(6, '0');
}

/**
 * Starts an authorization in `browser`: `GET /authorize` must send it to a
 * hosted page, which is opened. Returns that page and the pending request ID.
 */
export async function startLogin(browser: Browser, params: Record<string, string | undefined>): Promise<{ page: Response; requestId: string }> {
  const res = await browser.get(authorizeUrl(params));
  const location = expectSeeOther(res, /^\/login\?request=[A-Za-z0-9_-]{43}$/);
  const page = await browser.follow(res);
  expectPage(page, 200);
  return { page, requestId: requestIdOf(location) };
}

/**
 * Submits mobile + PIN on the login page and expects the one-time-PIN page.
 * `mobile` is left out of the form when `undefined` (a prefilled, read-only field).
 */
export async function submitCredentials(browser: Browser, page: Response, mobile: string | undefined, pin: string): Promise<Response> {
  const res = await browser.submit(page, { ...(mobile === undefined ? {} : { mobile }), pin, action: 'login' });
  expectSeeOther(res, /^\/login\/otp\?request=[A-Za-z0-9_-]{43}$/);
  const otpPage = await browser.follow(res);
  expectPage(otpPage, 200);
  return otpPage;
}

/** Enters the newest one-time PIN sent to `mobile`; returns the response (a redirect to the client when right). */
export async function enterOtp(browser: Browser, otpPage: Response, mobile: string, code?: string): Promise<Response> {
  return browser.submit(otpPage, { otp: code ?? (await latestOtp(browser.app, mobile)), action: 'verify' });
}

/**
 * The whole login: `/authorize`, the login page, the one-time PIN. Expects
 * the redirect back to the client with a code and returns its parameters.
 */
export async function logIn(
  browser: Browser,
  params: Record<string, string | undefined>,
  credentials: { mobile: string; pin: string } = { mobile: MOBILE, pin: PIN },
): Promise<URLSearchParams> {
  const { page } = await startLogin(browser, params);
  // A read-only field is posted with its prefilled value, as a browser does.
  const field = inputTag(page.body, 'mobile');
  const mobile = attribute(field, 'readonly') === undefined ? credentials.mobile : attribute(field, 'value');
  const otpPage = await submitCredentials(browser, page, mobile, credentials.pin);
  const res = await enterOtp(browser, otpPage, credentials.mobile);
  const result = expectClientRedirect(res, params.redirect_uri);
  expect(result.get('code')).toMatch(/^[A-Za-z0-9_-]{43}$/);
  return result;
}

/** A PKCE verifier (43 to 128 characters) and its S256 challenge. */
export function pkcePair(length = 64): { verifier: string; challenge: string } {
  const verifier = randomBytes(96).toString('base64url').slice(0, length);
  return { verifier, challenge: s256Challenge(verifier) };
}

/** `POST /token` with `grant_type=authorization_code`, client authenticated by HTTP Basic. */
export function exchangeCode(app: FastifyInstance, client: Credentials, params: Record<string, string | undefined>): Promise<Response> {
  const defined = Object.entries(params).filter((entry): entry is [string, string] => entry[1] !== undefined);
  return postToken(app, {
    authorization: basicAuth(client.id, client.secret),
    body: form([['grant_type', 'authorization_code'], ...defined]),
  });
}
