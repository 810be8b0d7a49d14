import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Passport } from 'passport';
import OAuth2Strategy, { type VerifyCallback } from 'passport-oauth2';
import { describe, expect, it, onTestFinished } from 'vitest';
import { introspect, sharedConnect, type ConformanceClient, type RunningConnect } from './connect.js';

/**
 * passport-oauth2, as its users run it: a web app on its own port whose
 * login and callback routes call `passport.authenticate` with an
 * `OAuth2Strategy` configured with Connect's endpoints, `pkce: true` and
 * `state: true` (kept in the session, as with express-session). The
 * strategy sends the client secret in the form body (client_secret_post).
 * It neither discovers, introspects nor revokes, and does not read `iss`;
 * refreshing is done with the strategy's OAuth 2.0 client
 * (`_oauth2.getOAuthAccessToken` with `grant_type=refresh_token`), as
 * passport-oauth2-refresh does.
 */

/** The part of the strategy's OAuth 2.0 client (node-oauth) that refreshes. */
interface RefreshingClient {
  getOAuthAccessToken(
    code: string,
    params: Record<string, string>,
    callback: (err: unknown, accessToken?: string, refreshToken?: string, results?: Record<string, unknown>) => void,
  ): void;
}

/** What the client app's callback route answers: the user the verify callback made, or why there is none. */
type Outcome =
  | { readonly user: { accessToken: string; refreshToken: string; params: Record<string, unknown> } }
  | { readonly failure: unknown }
  | { readonly error: { readonly name: string; readonly message: string; readonly code?: string } };

/** The client's web app: `/login` and `/callback` through passport, for whichever strategy is in use. */
interface ClientApp {
  readonly callbackUrl: string;
  /** Makes `strategy` the one the app's routes use. */
  use(strategy: OAuth2Strategy): void;
  /** `GET /login`: where the app sends the browser (Connect's authorization URL). */
  login(): Promise<URL>;
  /** `GET` the callback URL Connect sent the browser to; what the app made of it. */
  callback(url: URL): Promise<Outcome>;
}

async function startClientApp(): Promise<ClientApp> {
  const passport = new Passport();
  // One browser, so one session (the part of express-session the strategy's state store needs).
  const session: Record<string, unknown> = {};
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://client.test');
    Object.assign(req, { query: Object.fromEntries(url.searchParams), session });
    const answer = (status: number, body: Outcome) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    const authenticate = passport.authenticate('connect', { session: false }, (err: unknown, user: unknown, info: unknown) => {
      if (err) {
        const { name, message, code } = err as { name: string; message: string; code?: string };
        return answer(500, { error: { name, message, ...(code === undefined ? {} : { code }) } });
      }
      if (!user) return answer(401, { failure: info });
      return answer(200, { user: user as { accessToken: string; refreshToken: string; params: Record<string, unknown> } });
    });
    authenticate(req, res, () => answer(404, { error: { name: 'NotFound', message: 'no such route' } }));
  };
  const server: Server = createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    callbackUrl: `${origin}/callback`,
    use(strategy) {
      passport.use('connect', strategy);
    },
    async login() {
      const res = await fetch(`${origin}/login`, { redirect: 'manual' });
      expect(res.status).toBe(302);
      return new URL(res.headers.get('location') as string);
    },
    async callback(url) {
      expect(url.origin + url.pathname).toBe(`${origin}/callback`);
      return (await fetch(url)).json() as Promise<Outcome>;
    },
  };
}

function strategyFor(connect: RunningConnect, registered: ConformanceClient, secret = registered.secret): OAuth2Strategy {
  const verify = (accessToken: string, refreshToken: string, params: Record<string, unknown>, _profile: unknown, done: VerifyCallback) =>
    done(null, { accessToken, refreshToken, params });
  return new OAuth2Strategy(
    {
      authorizationURL: `${connect.issuer}/authorize`,
      tokenURL: `${connect.issuer}/token`,
      clientID: registered.id,
      clientSecret: secret,
      callbackURL: registered.redirectUri,
      pkce: true,
      state: true,
    },
    verify,
  );
}

/** A client app with its own registered client and strategy in use. */
async function setUp(connect: RunningConnect) {
  const app = await startClientApp();
  const registered = await connect.createClient({ redirectUri: app.callbackUrl });
  const strategy = strategyFor(connect, registered);
  app.use(strategy);
  return { app, registered, strategy };
}

describe('passport-oauth2', () => {
  const connect = sharedConnect();

  it('the authorization code with PKCE (S256) and state, through passport.authenticate', async () => {
    const { app, registered } = await setUp(connect());
    const authorizationUrl = await app.login();
    expect(authorizationUrl.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorizationUrl.searchParams.get('state')).toMatch(/.{8,}/);
    const outcome = await app.callback(await connect().authorize(authorizationUrl));
    expect(outcome).toMatchObject({ user: { params: { token_type: 'Bearer', expires_in: 3600 } } });
    const { user } = outcome as Extract<Outcome, { user: unknown }>;
    expect(user.accessToken.split('.')).toHaveLength(5);
    expect(user.refreshToken.split('.')).toHaveLength(3);
    expect(await introspect(connect(), registered, user.accessToken)).toMatchObject({ active: true, client_id: registered.id });
  });

  it('a callback with another state fails; the stored state is used once; a new login works', async () => {
    const { app } = await setUp(connect());
    const callback = await connect().authorize(await app.login());
    const forged = new URL(callback);
    forged.searchParams.set('state', 'not-the-stored-state');
    expect(await app.callback(forged)).toEqual({ failure: { message: 'Invalid authorization request state.' } });
    expect(await app.callback(callback)).toEqual({ failure: { message: 'Unable to verify authorization request state.' } });
    expect(await app.callback(await connect().authorize(await app.login()))).toMatchObject({ user: { params: { token_type: 'Bearer' } } });
  });

  it('the customer cancels on the consent page: access_denied, a failure with Connect’s description', async () => {
    const first = await setUp(connect());
    // Signed in at Connect through one client, the customer meets another on the consent page.
    await first.app.callback(await connect().authorize(await first.app.login()));
    const { app } = await setUp(connect());
    const callback = await connect().authorize(await app.login(), { consent: 'cancel' });
    expect(callback.searchParams.get('error')).toBe('access_denied');
    expect(await app.callback(callback)).toEqual({ failure: { message: 'the customer cancelled' } });
  });

  it('refresh with the strategy’s OAuth 2.0 client: a new access token, the previous one inactive', async () => {
    const { app, registered, strategy } = await setUp(connect());
    const { user } = (await app.callback(await connect().authorize(await app.login()))) as Extract<Outcome, { user: unknown }>;
    // The strategy's client is protected in the typings; passport-oauth2-refresh reads it all the same.
    const { _oauth2: oauth2 } = strategy as unknown as { _oauth2: RefreshingClient };
    const refreshed = await new Promise<{ accessToken?: string; refreshToken?: string; results?: Record<string, unknown> }>((resolve, reject) => {
      oauth2.getOAuthAccessToken(user.refreshToken, { grant_type: 'refresh_token' }, (err, accessToken, refreshToken, results) =>
        err ? reject(new Error(JSON.stringify(err))) : resolve({ accessToken, refreshToken, results }),
      );
    });
    expect(refreshed.accessToken).not.toBe(user.accessToken);
    expect(refreshed.refreshToken).toBe(user.refreshToken);
    expect(refreshed.results).toMatchObject({ token_type: 'Bearer', expires_in: 3600 });
    expect(await introspect(connect(), registered, user.accessToken)).toEqual({ active: false });
  });

  it('a wrong client secret: the code exchange fails with Connect’s 401 invalid_client', async () => {
    const { app, registered } = await setUp(connect());
    app.use(strategyFor(connect(), registered, `${registered.secret}x`));
    // The strategy reads Connect's error answer into a TokenError with its code and description.
    expect(await app.callback(await connect().authorize(await app.login()))).toEqual({
      error: { name: 'TokenError', message: 'client authentication failed', code: 'invalid_client' },
    });
  });
});
