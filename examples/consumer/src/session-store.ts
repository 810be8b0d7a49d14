import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

/** What the shop remembers about one browser. */
export interface Session {
  readonly id: string;
  /** The key the customer's Connect tokens are stored under (in a real shop: your own user ID). */
  readonly customerKey: string;
  /** An authorization in progress: what must match when the customer comes back. */
  pending?: { state: string; codeVerifier: string | undefined } | undefined;
  /** The linked Connect customer. */
  linked?: { userId: string; profileId: string } | undefined;
  /** The last "Refresh now": the tokens before and after. */
  lastRefresh?: { before: TokenSummary; after: TokenSummary } | undefined;
  /** A payout waiting for the step-up sign-in it was challenged for; sent again at the callback. */
  resumePayout?: boolean | undefined;
  /** The last payout's outcome, shown on the account page. */
  lastPayout?: { ok: true; body: unknown } | { ok: false; message: string } | undefined;
}

/** A token shown on the page: never the token itself. */
export interface TokenSummary {
  readonly fingerprint: string;
  readonly expiresAt: number;
}

/** The shop's cookie: HttpOnly, SameSite=Lax (so the redirect back from Connect carries it), path /. */
export const SESSION_COOKIE = 'shop_session';

/**
 * Server-side sessions in memory, keyed by a random ID in an HttpOnly
 * cookie. The PKCE verifier and `state` stay here, never in the browser.
 */
export class SessionStore {
  readonly #sessions = new Map<string, Session>();

  /** The browser's session, created (and its cookie set) when it has none. */
  open(request: IncomingMessage, response: ServerResponse): Session {
    const id = readCookie(request.headers.cookie, SESSION_COOKIE);
    const existing = id ? this.#sessions.get(id) : undefined;
    if (existing) return existing;
    const session: Session = { id: randomBytes(32).toString('base64url'), customerKey: `shop-user-${randomBytes(8).toString('hex')}` };
    this.#sessions.set(session.id, session);
    response.setHeader('set-cookie', `${SESSION_COOKIE}=${session.id}; Path=/; HttpOnly; SameSite=Lax`);
    return session;
  }
}

function readCookie(header: string | undefined, name: string): string | undefined {
  for (const part of header?.split(';') ?? []) {
    const [key, ...value] = part.trim().split('=');
    if (key === name) return value.join('=');
  }
  return undefined;
}
