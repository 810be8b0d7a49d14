import type { Client, ClientStatus } from '../clients/client.js';
import type { ClientStore } from '../clients/client-store.js';
import type { AuthorizationCodeStore } from '../codes/code-store.js';
import { NotFound } from '../storage-errors.js';
import { STATUS_REACHES_SERVERS_SECONDS } from '../lifetimes.js';
import type { TokenSessionStore } from '../tokens/token-session-store.js';

/** The stores a status change writes, all of one transaction. */
export interface ClientStatusStores {
  readonly clients: Pick<ClientStore, 'changeClientStatus' | 'findClient'>;
  readonly tokenSessions: Pick<TokenSessionStore, 'revokeTokenSessionsOf'>;
  readonly codes: Pick<AuthorizationCodeStore, 'endAuthorizationCodesOf'>;
}

/** What a status change ended, by kind. */
export interface EndedByStatusChange {
  /** Token sessions of the client: each a customer's refresh token and access token. */
  readonly tokenSessions: number;
  /** Unredeemed authorization codes issued to the client. */
  readonly codes: number;
}

/**
 * The outcome of a status change: done now; nothing to do (the client
 * already has that status); or not before the clock reaches `notBefore`,
 * since until then the change could not keep the rule of `tokensEndedAt`.
 */
export type ClientStatusOutcome =
  | { readonly kind: 'changed'; readonly client: Client; readonly ended: EndedByStatusChange }
  | { readonly kind: 'unchanged'; readonly client: Client }
  | { readonly kind: 'not-yet'; readonly client: Client; readonly notBefore: number };

/**
 * `clients disable` (docs/operator-guide.md, "Disabling a client"), in the
 * caller's transaction: the client can no longer authenticate, and every
 * token it holds ends at once. Its client access tokens are self-contained,
 * so they are ended by time: `tokensEndedAt` becomes `now`, and a client
 * access token with `iat <= tokensEndedAt` is refused from then on, also
 * after an enable. Its token sessions (the customer tokens of its sessions)
 * are revoked and its unredeemed codes ended.
 */
export function disableClient(id: string, stores: ClientStatusStores, now: number): Promise<ClientStatusOutcome> {
  return changeStatus(id, 'disabled', now, stores);
}

/**
 * `clients enable`: the client may authenticate again, and nothing it held
 * before comes back. Exact to the second, although tokens carry whole
 * seconds: the enable sets `tokensEndedAt` to `now - 1`, and only once
 * that is past the second in which every server has heard of the disable
 * (the disable's second + {@link STATUS_REACHES_SERVERS_SECONDS}; else
 * `not-yet`: the caller waits for the clock). So every client access token
 * issued after the enable has `iat >= now > tokensEndedAt` and is never
 * ended by the earlier disable, while a token a server issued while the
 * client was disabled (before it heard of the disable) stays ended. Token
 * sessions and codes such a server may have made meanwhile are ended here
 * too.
 */
export function enableClient(id: string, stores: ClientStatusStores, now: number): Promise<ClientStatusOutcome> {
  return changeStatus(id, 'active', now, stores);
}

async function changeStatus(id: string, status: ClientStatus, now: number, stores: ClientStatusStores): Promise<ClientStatusOutcome> {
  // A disable never waits. An enable waits until every server can have
  // heard of the disable before the second it ends tokens up to.
  const change =
    status === 'disabled'
      ? { status, tokensEndedAt: now }
      : { status, tokensEndedAt: now - 1, endedBy: now - 1 - STATUS_REACHES_SERVERS_SECONDS };
  const changed = await stores.clients.changeClientStatus(id, change, now);
  if (!changed) {
    const existing = await stores.clients.findClient(id);
    if (!existing) throw new NotFound(`no client ${id}`);
    if (existing.status === status) return { kind: 'unchanged', client: existing };
    // The disable was too recent (or the clock went back): wait for it.
    const endedAt = existing.tokensEndedAt ?? 0;
    return { kind: 'not-yet', client: existing, notBefore: endedAt + 1 + STATUS_REACHES_SERVERS_SECONDS };
  }
  // The codes before the token sessions: an exchange of one of its codes
  // running meanwhile holds that code's row, so ending the codes waits for
  // it, and the token session it made is then revoked with the others.
  const codes = await stores.codes.endAuthorizationCodesOf({ clientId: id }, now);
  const tokenSessions = await stores.tokenSessions.revokeTokenSessionsOf({ clientId: id }, now);
  return { kind: 'changed', client: changed, ended: { tokenSessions, codes } };
}
