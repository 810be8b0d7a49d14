/**
 * Records of one-time PINs, as stores keep them.
 * Every timestamp is epoch seconds; every secret is stored only hashed.
 */

/**
 * What a one-time-PIN challenge proves when it is answered: a login, a
 * registration's mobile, or the right to choose a new PIN (`reset`).
 */
export type OtpPurpose = 'login' | 'register' | 'reset';

/** A one-time PIN sent by SMS, waiting to be entered. */
export interface OtpChallengeRecord {
  readonly id: string;
  readonly requestHash: string;
  readonly purpose: OtpPurpose;
  readonly mobile: string;
  /**
   * The customer logging in (`login`) or resetting the PIN (`reset`);
   * `null` for a registration, and for a reset asked for a mobile with no
   * account that may reset (its code is never sent, and nothing can answer it).
   */
  readonly profileId: string | null;
  /** The PIN chosen at registration, already hashed; `null` for a login. */
  readonly pendingPinHash: string | null;
  /** Keyed hash of the current one-time PIN. */
  readonly codeHash: string;
  /** Entries so far, each counted before it was checked. */
  readonly attempts: number;
  /** Resends so far. */
  readonly resends: number;
  readonly lastSentAt: number;
  readonly expiresAt: number;
  readonly createdAt: number;
  readonly consumedAt: number | null;
}
