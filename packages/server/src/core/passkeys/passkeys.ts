/**
 * Passkey rules that need no WebAuthn verification (docs/operator-guide.md,
 * "Passkeys"): the challenge's lifetime and stored form, the customer's
 * user handle, and the hold of a new passkey.
 */
import { createHash, randomBytes } from 'node:crypto';

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
 * strength): `null` when the sign-in that added it used a passkey itself,
 * or the hold is 0; else `now` + `CONNECT_PASSKEY_HOLD`.
 */
export function passkeyHeldUntil(now: number, holdSeconds: number, addedFromPasskeySignIn: boolean): number | null {
  return addedFromPasskeySignIn || holdSeconds === 0 ? null : now + holdSeconds;
}

/** Whether the passkey is held at `now`. */
export function isPasskeyHeld(passkey: { readonly heldUntil: number | null }, now: number): boolean {
  return passkey.heldUntil !== null && passkey.heldUntil > now;
}
