/**
 * Records of passkeys (WebAuthn credentials) and of the challenges of
 * their ceremonies, as stores keep them (docs/operator-guide.md,
 * "Passkeys"). Every timestamp is epoch seconds; binary values are
 * base64url; a challenge is stored only hashed.
 */

/** A customer's passkey. */
export interface PasskeyRecord {
  /** The credential ID, base64url; unique across customers. */
  readonly credentialId: string;
  readonly profileId: string;
  /** The customer's opaque WebAuthn user handle (random, never the mobile), the same on each of their passkeys. */
  readonly userHandle: string;
  /** The COSE public key, base64url. */
  readonly publicKey: string;
  /** The last signature counter seen; 0 while the authenticator keeps none. */
  readonly signCount: number;
  /** The transports the authenticator named at registration (`internal`, `hybrid`, `usb` …). */
  readonly transports: readonly string[];
  /** The authenticator model's AAGUID, when it told one. */
  readonly aaguid: string | null;
  /** A name the customer or operator gave it, if any. */
  readonly name: string | null;
  readonly createdAt: number;
  readonly lastUsedAt: number | null;
  /** Until when it gives no phishing-resistant strength (`CONNECT_PASSKEY_HOLD`); `null`: not held. */
  readonly heldUntil: number | null;
  /** When `customers lock` suspended it; `null`: usable. */
  readonly suspendedAt: number | null;
}

/** What a WebAuthn challenge is for: creating a passkey, or signing in with one. */
export type WebAuthnPurpose = 'register' | 'authenticate';

/** A WebAuthn ceremony's single-use challenge, bound to one journey. */
export interface WebAuthnChallengeRecord {
  /** SHA-256 of the challenge, base64url (`hashWebAuthnChallenge`). */
  readonly challengeHash: string;
  /** The journey it belongs to, hashed as every store names journeys. */
  readonly requestHash: string;
  readonly purpose: WebAuthnPurpose;
  /** The customer it was issued for, when known (enrolment; a sign-in with a known mobile). */
  readonly profileId: string | null;
  readonly createdAt: number;
  readonly expiresAt: number;
  readonly consumedAt: number | null;
}
