/**
 * Passkey rules that need no WebAuthn verification (docs/operator-guide.md,
 * "Passkeys"): the challenge's lifetime and stored form, the customer's
 * user handle, and the hold of a new passkey.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { PasskeyStore } from './passkey-store.js';
import type { PasskeyRecord } from './records.js';

/** Seconds a WebAuthn challenge can be answered: 5 minutes. */
export const WEBAUTHN_CHALLENGE_TTL_SECONDS = 300;

/** How a challenge is stored: its SHA-256, base64url. */
export function hashWebAuthnChallenge(challenge: string): string {
  return createHash('sha256').update(challenge).digest('base64url');
}

/** A new customer's WebAuthn user handle: 32 random bytes, base64url; never derived from the mobile. */
export function newUserHandle(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * Until when a passkey added at `now` is held (gives no phishing-resistant
 * strength; docs/operator-guide.md, "Passkeys"). `signedInWith` is the
 * passkey the adding sign-in used, or `null` for a sign-in without one.
 * - Signed in with a passkey out of its hold: `null`, not held.
 * - Otherwise `now` + `CONNECT_PASSKEY_HOLD` (nothing when it is 0), and at
 *   least as long as the passkey it signed in with is still held: a
 *   sign-in with a held passkey counts as one without, so whoever took
 *   over the mobile number cannot add a second passkey to skip the hold
 *   of the first.
 */
export function passkeyHeldUntil(now: number, holdSeconds: number, signedInWith: { readonly heldUntil: number | null } | null): number | null {
  const inherited = signedInWith !== null && isPasskeyHeld(signedInWith, now) ? signedInWith.heldUntil : null;
  if (signedInWith !== null && inherited === null) return null;
  const own = holdSeconds === 0 ? null : now + holdSeconds;
  if (own === null) return inherited;
  return Math.max(own, inherited ?? own);
}

/** Whether the passkey is held at `now`. */
export function isPasskeyHeld(passkey: { readonly heldUntil: number | null }, now: number): boolean {
  return passkey.heldUntil !== null && passkey.heldUntil > now;
}

/** The customer's passkeys that are not suspended (`customers lock`), oldest first. */
export async function usablePasskeysOf(store: Pick<PasskeyStore, 'listPasskeysOf'>, profileId: string): Promise<PasskeyRecord[]> {
  return (await store.listPasskeysOf(profileId)).filter((passkey) => passkey.suspendedAt === null);
}
