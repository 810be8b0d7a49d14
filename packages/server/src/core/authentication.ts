/**
 * How a customer authenticated (docs/tokens.md, "How the customer signed
 * in"): the `acr`, `amr` and `auth_time` a sign-in gives its customer
 * session, its codes, their token sessions and every token of those
 * (OpenID Connect Core §2; RFC 8176 for `amr`). They are set once, when
 * the sign-in completes, and stay as they are through silent sign-ins from
 * the session, refreshes and `POST /tokens`.
 */

/**
 * The `acr` of a sign-in with the customer's PIN and a one-time PIN sent
 * by SMS. Not a registered value (as `phr` is, OpenID EAP ACR Values), so
 * a URN rather than a short name that another issuer might give another
 * meaning (OpenID Connect Core §2, `acr`).
 */
export const ACR_PIN_SMS = 'urn:connect:acr:pin-sms';
/**
 * The `acr` of a sign-in with a passkey, with user verification, that is
 * out of its hold: phishing-resistant (OpenID EAP ACR Values, `phr`;
 * docs/tokens.md, "How the customer signed in").
 */
export const ACR_PHR = 'phr';

/** The `acr` values Connect issues, as discovery lists them (`acr_values_supported`), strongest first. */
export const ACR_VALUES_SUPPORTED: readonly string[] = [ACR_PHR, ACR_PIN_SMS];

/**
 * RFC 8176 §2 authentication method references that Connect uses: `pin`
 * (the customer's PIN), `sms` (a code sent by SMS proved the phone), `mfa`
 * (more than one factor: something known and something held), and for a
 * passkey `hwk` (a device-bound key), `swk` (a synced key: backup eligible)
 * and `user` (the authenticator verified its user: biometric or device PIN).
 */
export type AuthenticationMethod = 'pin' | 'sms' | 'mfa' | 'hwk' | 'swk' | 'user';

/** How a customer authenticated, and when. */
export interface Authentication {
  /** The authentication context class (`acr`). */
  readonly acr: string;
  /** The methods used (`amr`, RFC 8176), in that order. */
  readonly amr: readonly string[];
  /** When the customer completed the sign-in, epoch seconds (`auth_time`). */
  readonly authTime: number;
}

/** How the phone of a PIN + SMS sign-in was proved. */
export type PhoneProof =
  /** The sign-in's own one-time PIN, entered right. */
  | 'sign_in_otp'
  /**
   * The one-time PIN of a PIN reset in the same journey, entered right less
   * than `RESET_PROVES_PHONE_SECONDS` before the new PIN was entered: no
   * second SMS is sent (docs/journey.md, "After a PIN reset"), yet the
   * phone was proved by SMS all the same.
   */
  | 'reset_otp';

/**
 * The authentication of a sign-in with the customer's PIN and a one-time
 * PIN by SMS, completed at `authTime`. Either proof of the phone is an SMS
 * code, so both give `amr` `["pin","sms","mfa"]`; a registration too (the
 * PIN it chose, then its SMS code).
 */
export function pinSmsAuthentication(authTime: number, proof: PhoneProof): Authentication {
  const methods: Record<PhoneProof, readonly AuthenticationMethod[]> = {
    sign_in_otp: ['pin', 'sms', 'mfa'],
    reset_otp: ['pin', 'sms', 'mfa'],
  };
  return { acr: ACR_PIN_SMS, amr: methods[proof], authTime };
}

/**
 * The authentication of a sign-in with a passkey, with user verification,
 * completed at `authTime`: `amr` `["swk","user","mfa"]` for a synced
 * passkey (backup eligible), `["hwk","user","mfa"]` for a device-bound
 * one; `acr` `phr` only when the passkey is out of its hold, else the PIN +
 * SMS value: a held passkey is only as strong as the PIN + SMS sign-in
 * that added it (docs/tokens.md, "How the customer signed in").
 */
export function passkeyAuthentication(authTime: number, passkey: { readonly backupEligible: boolean; readonly held: boolean }): Authentication {
  const key: AuthenticationMethod = passkey.backupEligible ? 'swk' : 'hwk';
  const amr: readonly AuthenticationMethod[] = [key, 'user', 'mfa'];
  return { acr: passkey.held ? ACR_PIN_SMS : ACR_PHR, amr, authTime };
}

/** The claims of a token for `authentication`: none when it is not known (a session from before Connect recorded it). */
export function authenticationClaims(authentication: Authentication | null | undefined): { acr?: string; amr?: string[]; auth_time?: number } {
  if (!authentication) return {};
  return { acr: authentication.acr, amr: [...authentication.amr], auth_time: authentication.authTime };
}

/**
 * The authentication a token's claims carry; `null` when it carries none
 * (a token minted before Connect recorded it) or they are not well formed.
 */
export function authenticationOfClaims(claims: Record<string, unknown>): Authentication | null {
  const { acr, amr, auth_time: authTime } = claims;
  if (typeof acr !== 'string' || !Array.isArray(amr) || !amr.every((m) => typeof m === 'string') || typeof authTime !== 'number' || !Number.isSafeInteger(authTime)) {
    return null;
  }
  return { acr, amr: amr as string[], authTime };
}
