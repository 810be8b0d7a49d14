/**
 * The storage port of passkeys and of WebAuthn challenges
 * (docs/operator-guide.md, "Passkeys").
 *
 * Implemented by `storage/kysely/` for both engines and held to this by
 * `test/storage/contract.ts`; the rules every store follows are in `core/storage/storage.ts`.
 */
import type { PasskeyRecord, WebAuthnChallengeRecord, WebAuthnPurpose } from './records.js';

/** Passkeys and WebAuthn challenges. Every change is one conditional statement, safe under concurrency. */
export interface PasskeyStore {
  /** Adds a passkey; a credential ID already stored (for any customer) throws `Conflict`. */
  insertPasskey(passkey: PasskeyRecord): Promise<void>;
  /** The passkey with this credential ID, suspended or not. */
  findPasskey(credentialId: string): Promise<PasskeyRecord | undefined>;
  /** The customer's passkeys, oldest first (suspended ones included). */
  listPasskeysOf(profileId: string): Promise<PasskeyRecord[]>;
  /**
   * Adds a passkey only while its customer is active, in one statement:
   * `added`; `exists` when its credential ID is stored already (for any
   * customer); `customer_unavailable` when the customer is not active.
   */
  insertPasskeyOfActiveCustomer(passkey: PasskeyRecord): Promise<'added' | 'exists' | 'customer_unavailable'>;
  /** The customer's WebAuthn user handle, as their row holds it; `undefined` when none was set (or no such customer). */
  findUserHandleOf(profileId: string): Promise<string | undefined>;
  /**
   * Sets the customer's user handle to `candidate` unless one is set, in
   * one conditional update, and returns the one the row then holds (of
   * concurrent calls, every one gets the first one's); `undefined` when
   * there is no such customer.
   */
  claimUserHandle(profileId: string, candidate: string): Promise<string | undefined>;
  /**
   * Records a sign-in with the passkey at `now`, in one conditional update:
   * only when it is not suspended and `signCount` advances the stored
   * counter (greater than it), or both are 0 (an authenticator that keeps
   * no counter). Then `lastUsedAt` = `now` and the counter = `signCount`.
   * Returns whether it did: `false` for a missing or suspended passkey or
   * a counter that did not advance (a cloned authenticator, or a replay);
   * of concurrent calls with one counter, one.
   */
  recordPasskeyUse(credentialId: string, use: { signCount: number; now: number }): Promise<boolean>;
  /**
   * Deletes the customer's passkey with this credential ID; returns whether
   * there was one. It takes the customer's row first, the order a passkey
   * sign-in takes them in (`SignInStore.signInWithPasskey`): a sign-in that
   * found the passkey completes before this returns, and none after it does.
   */
  removePasskey(profileId: string, credentialId: string): Promise<boolean>;
  /** Suspends every unsuspended passkey of the customer at `now` (`customers lock`); returns how many. */
  suspendPasskeysOf(profileId: string, now: number): Promise<number>;
  /** Lifts the suspension of every passkey of the customer (`customers unlock`); returns how many. */
  restorePasskeysOf(profileId: string): Promise<number>;

  /** Stores a challenge; a challenge hash already stored throws `Conflict`. */
  insertWebAuthnChallenge(challenge: WebAuthnChallengeRecord): Promise<void>;
  /**
   * Consumes the challenge if it is unconsumed, unexpired at `now`, of
   * this journey and for this purpose, in one conditional update, and
   * returns it as it now is; `undefined` otherwise. Of any number of
   * concurrent calls, one gets it.
   */
  consumeWebAuthnChallenge(
    challengeHash: string,
    binding: { requestHash: string; purpose: WebAuthnPurpose; now: number },
  ): Promise<WebAuthnChallengeRecord | undefined>;
  /** Deletes at most `limit` challenges expired or consumed at or before `cutoff`; returns how many. */
  deleteWebAuthnChallengesEndedBy(cutoff: number, limit: number): Promise<number>;
}
