import type { Customer } from '../../src/core/customers/customer.js';
import { build, type BuildOptions, type TestApp } from './build.js';
import { addCustomer, approveIfAsked, authorizeParams, authorizeUrl, Browser, expectClientRedirect, logIn, type BrowserOptions } from './customer-flow.js';
import type { Credentials } from './wire.js';

/**
 * The starting points most HTTP tests share, each one step further than the
 * last: an app with a client; that plus a customer (the one of `MOBILE`
 * with `PIN`) and a browser; that plus the customer signed in through the
 * hosted pages. `lifecycle()` (token-session.ts) goes on to the tokens.
 */

/** What {@link appWithClient} can be told: `build` options and the client's grants. */
export interface AppWithClientOptions extends BuildOptions {
  /** The client's grants; default: `createClient()`'s own. */
  readonly grants?: readonly string[] | undefined;
}

/** An app with a registered client. */
export interface AppWithClient {
  readonly t: TestApp;
  readonly client: Credentials;
}

/** Builds an app (closed when the test ends) and registers a client. */
export async function appWithClient(options: AppWithClientOptions = {}): Promise<AppWithClient> {
  const { grants, ...buildOptions } = options;
  const t = await build(buildOptions);
  const client = await t.createClient(grants ? { grants } : {});
  return { t, client };
}

/** What {@link appWithCustomer} can be told: as {@link appWithClient}, and how the browser reaches the app. */
export interface AppWithCustomerOptions extends AppWithClientOptions {
  readonly browser?: BrowserOptions;
}

/** An app with a registered client, the customer of `MOBILE` with `PIN`, and a browser (no cookies yet). */
export interface AppWithCustomer extends AppWithClient {
  readonly customer: Customer;
  readonly browser: Browser;
}

/** {@link appWithClient}, then the customer of `MOBILE` with `PIN` (straight through core) and a browser. */
export async function appWithCustomer(options: AppWithCustomerOptions = {}): Promise<AppWithCustomer> {
  const { browser: browserOptions, ...appOptions } = options;
  const { t, client } = await appWithClient(appOptions);
  const customer = await addCustomer(t);
  return { t, client, customer, browser: new Browser(t.app, browserOptions ?? {}) };
}

/** Every grant: what a client needs to obtain and refresh customer tokens. */
export const REFRESH_GRANTS = ['client_credentials', 'authorization_code', 'refresh_token'] as const;

/** What {@link signedIn} can be told: `build` options or an app already built, and the client's grants. */
export interface SignedInOptions extends BuildOptions {
  /** The client's grants; default {@link REFRESH_GRANTS}. */
  readonly grants?: readonly string[] | undefined;
  /** An app already built: only the client and the customer are added to it. */
  readonly t?: TestApp | undefined;
}

/** An app with a client and a customer signed in through the hosted pages. */
export interface SignedIn {
  readonly t: TestApp;
  readonly client: Credentials;
  readonly profileId: string;
  /** A browser with a live customer session. */
  readonly browser: Browser;
  /** The code the sign-in itself ended with, not yet redeemed. */
  readonly loginCode: string;
  /** A fresh code from the live session, for `who` (default: the client); no login, so no PIN hashing. */
  code(extra?: Record<string, string | undefined>, who?: Credentials): Promise<string>;
}

/**
 * Builds an app (unless given `t`), registers a client with `grants` and a
 * customer, and signs the customer in through the hosted pages.
 */
export async function signedIn(options: SignedInOptions = {}): Promise<SignedIn> {
  const { grants, t: given, ...buildOptions } = options;
  const t = given ?? (await build(buildOptions));
  const client = await t.createClient({ grants: grants ?? REFRESH_GRANTS });
  const customer = await addCustomer(t);
  const browser = new Browser(t.app);
  const params = await logIn(browser, authorizeParams(client));
  return {
    t,
    client,
    profileId: customer.profileId,
    browser,
    loginCode: params.get('code') ?? '',
    async code(extra = {}, who = client) {
      const res = await approveIfAsked(browser, await browser.get(authorizeUrl(authorizeParams(who, extra))));
      return expectClientRedirect(res).get('code') ?? '';
    },
  };
}
