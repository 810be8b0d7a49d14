/** Whether a customer may log in. `locked` is an operator's lock, lifted only by `customers unlock`. */
export type CustomerStatus = 'active' | 'locked';

/**
 * A customer account, keyed by mobile number.
 *
 * `profileId` is a random 12-digit number (never a sequence); `pinHash` is
 * scrypt with a per-account salt. `failedPinAttempts` counts wrong PINs in a
 * row; `lockedUntil` (epoch seconds) is the temporary lockout they cause.
 */
export interface Customer {
  readonly profileId: string;
  /** E.164, e.g. `+639171234567`. */
  readonly mobile: string;
  readonly name: string | null;
  readonly pinHash: string;
  readonly status: CustomerStatus;
  readonly failedPinAttempts: number;
  readonly lockedUntil: number | null;
  readonly createdAt: number;
  readonly updatedAt: number;
}

/**
 * The masked user ID sent to the consumer (`userId`): the country code and
 * the last four digits stay, every other digit becomes `*`.
 *
 * @example maskMobile('+639171234567', '63') === '+63******4567'
 */
export function maskMobile(mobile: string, countryCallingCode: string): string {
  const national = mobile.slice(1 + countryCallingCode.length);
  const visible = national.slice(-4);
  return `+${countryCallingCode}${'*'.repeat(Math.max(0, national.length - visible.length))}${visible}`;
}
