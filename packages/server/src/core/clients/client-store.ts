/**
 * The storage port of clients.
 *
 * Implemented by `storage/kysely/` for both engines and held to this by
 * `test/storage/contract.ts`; the rules every store follows are in `core/storage/storage.ts`.
 */
import type { Client, ClientJwks, ClientProfile, ClientStatus, GrantType } from './client.js';

/** Fields of a client that `updateClient` may change. */
export interface ClientPatch {
  name?: string;
  redirectUri?: string;
  grants?: readonly GrantType[];
  requirePkce?: boolean;
  scopes?: readonly string[];
  scopeDescriptions?: Readonly<Record<string, string>>;
  status?: ClientStatus;
  secretHash?: string;
  previousSecretHash?: string | null;
  previousSecretExpiresAt?: number | null;
  profile?: ClientProfile;
  jwks?: ClientJwks | null;
  jwksUri?: string | null;
}

/** Registered API consumers. */
export interface ClientStore {
  /** The client with this ID, or `undefined`. */
  findClient(id: string): Promise<Client | undefined>;
  /** Every client, oldest first. */
  listClients(): Promise<Client[]>;
  /**
   * Replaces the client's current (`secretHash`) or previous secret hash by
   * `replacement` in one conditional update, only while it still is
   * `expected` (a secret verified under an older master key, hashed again
   * under the writing one). Returns whether it replaced it.
   */
  renewSecretHash(id: string, which: 'current' | 'previous', expected: string, replacement: string): Promise<boolean>;
  /** Adds a client. Throws `Conflict` when the ID exists. */
  insertClient(client: Client): Promise<void>;
  /**
   * Changes the given fields and sets `updatedAt` to `now`; returns the
   * updated client. Throws `NotFound` when there is no such client.
   */
  updateClient(id: string, patch: ClientPatch, now: number): Promise<Client>;
  /**
   * Moves a client to `status` in one conditional update, only while its
   * status is another one and, when `endedBy` is given, its `tokensEndedAt`
   * is `null` or at most `endedBy`; sets `tokensEndedAt` to the later of its
   * value and the given one (it only ever moves forward) and `updatedAt` to
   * `now`.
   *
   * @returns the client after the change for the one caller that made it;
   *   `undefined` when nothing changed (no such client, already in that
   *   status, or its tokens were ended after `endedBy`).
   */
  changeClientStatus(
    id: string,
    change: { status: ClientStatus; tokensEndedAt: number; endedBy?: number },
    now: number,
  ): Promise<Client | undefined>;
}
