/**
 * Records of the customer authorization flow, as stores keep them.
 * Every timestamp is epoch seconds; every secret is stored only hashed.
 */

/** A validated `/authorize` request waiting for the customer to log in. */
export interface AuthorizationRequestRecord {
  /** SHA-256 of the request ID that travels in the hosted pages' URLs. */
  readonly idHash: string;
  readonly clientId: string;
  readonly redirectUri: string;
  readonly state: string | null;
  /** PKCE S256 challenge, when the request carried one. */
  readonly codeChallenge: string | null;
  /** The `user_id` of the request (E.164), when given. */
  readonly loginHint: string | null;
  /** SHA-256 of the browser cookie the request is bound to. */
  readonly browserHash: string;
  readonly createdAt: number;
  readonly expiresAt: number;
  readonly completedAt: number | null;
}

/** What a one-time-PIN challenge proves when it is answered. */
export type OtpPurpose = 'login' | 'register';

/** A one-time PIN sent by SMS, waiting to be entered. */
export interface OtpChallengeRecord {
  readonly id: string;
  readonly requestHash: string;
  readonly purpose: OtpPurpose;
  readonly mobile: string;
  /** The customer logging in (`login`); `null` for a registration. */
  readonly profileId: string | null;
  /** The PIN chosen at registration, already hashed; `null` for a login. */
  readonly pendingPinHash: string | null;
  /** Keyed hash of the current one-time PIN. */
  readonly codeHash: string;
  /** Wrong entries so far. */
  readonly attempts: number;
  /** Resends so far. */
  readonly resends: number;
  readonly lastSentAt: number;
  readonly expiresAt: number;
  readonly createdAt: number;
  readonly consumedAt: number | null;
}

/** A customer's login session at Connect (the hosted pages' cookie). */
export interface CustomerSessionRecord {
  /** SHA-256 of the session cookie value. */
  readonly idHash: string;
  readonly profileId: string;
  readonly createdAt: number;
  readonly lastSeenAt: number;
  /** Absolute end of the session. */
  readonly expiresAt: number;
  readonly endedAt: number | null;
}

/** An authorization code, single use. */
export interface AuthorizationCodeRecord {
  /** SHA-256 of the code. */
  readonly codeHash: string;
  readonly clientId: string;
  readonly redirectUri: string;
  readonly profileId: string;
  readonly codeChallenge: string | null;
  readonly createdAt: number;
  readonly expiresAt: number;
  readonly consumedAt: number | null;
}

/**
 * The tokens one authorization gave a client for a customer (`sid`): the
 * refresh token and the one access token currently valid.
 */
export interface TokenSessionRecord {
  readonly sid: string;
  readonly clientId: string;
  readonly profileId: string;
  /** The code the session was created from, so a replay can revoke it. */
  readonly codeHash: string | null;
  readonly refreshJti: string;
  /** The only customer access token of this session still accepted. */
  readonly accessJti: string;
  readonly createdAt: number;
  readonly refreshExpiresAt: number;
  readonly accessExpiresAt: number;
  readonly revokedAt: number | null;
}

/** An SMS kept in the sandbox outbox. */
export interface OutboxMessage {
  readonly id: string;
  readonly to: string;
  readonly body: string;
  readonly sentAt: number;
}
