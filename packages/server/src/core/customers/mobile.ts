import { isSupportedCountry, parsePhoneNumberFromString } from 'libphonenumber-js/max';
import { maskMobile } from './customer.js';

const NOT_SMS_CAPABLE = new Set(['FIXED_LINE', 'TOLL_FREE', 'PREMIUM_RATE', 'SHARED_COST', 'VOICEMAIL', 'PAGER', 'UAN']);

/** A mobile number checked and normalised. */
export interface MobileNumber {
  /** E.164, e.g. `+639171234567`. */
  readonly e164: string;
  /** The country calling code without `+`, e.g. `63`. */
  readonly countryCallingCode: string;
  /** The masked form shown to consumers (`userId`). */
  readonly masked: string;
  /**
   * The ISO 3166 alpha-2 country the number belongs to, e.g. `PH`;
   * `undefined` for a number of no country (satellite phones, +881, and
   * international networks, +882/+883).
   */
  readonly country: string | undefined;
}

/** Why one-time PINs may not go to a mobile number (see {@link pinDestinationRefusal}). */
export type DestinationRefusal = 'no_country' | 'country_not_allowed';

/** Whether `code` is an ISO 3166 alpha-2 country code with telephone numbers (`CONNECT_SMS_COUNTRIES`). */
export function isSmsCountry(code: string): boolean {
  return /^[A-Z]{2}$/.test(code) && isSupportedCountry(code);
}

/**
 * Whether one-time PINs may be sent to `mobile` (docs/operator-guide.md,
 * "SMS budgets"): numbers of no country (satellite and international
 * networks, SMS to which is billed at premium rates) never; others only
 * when `countries` (`CONNECT_SMS_COUNTRIES`, unset = every country) lists
 * their country. Premium-rate and shared-cost numbers never parse
 * ({@link parseMobile}). `undefined` when they may.
 */
export function pinDestinationRefusal(mobile: MobileNumber, countries: readonly string[] | undefined): DestinationRefusal | undefined {
  if (mobile.country === undefined) return 'no_country';
  if (countries !== undefined && !countries.includes(mobile.country)) return 'country_not_allowed';
  return undefined;
}

/**
 * Parses a mobile number in international format (`+` and country code;
 * spaces, dashes and brackets are tolerated) and checks it is a valid
 * number that can receive SMS. Returns `undefined` otherwise.
 */
export function parseMobile(value: string): MobileNumber | undefined {
  const trimmed = value.trim();
  if (!trimmed.startsWith('+') || trimmed.length > 32 || /[^+\d\s().-]/.test(trimmed)) return undefined;
  const phone = parsePhoneNumberFromString(trimmed);
  if (!phone?.isValid()) return undefined;
  // The one-time PIN goes by SMS: refuse numbers that cannot receive one. Some
  // countries do not tell mobile from fixed-line numbers; those are accepted.
  if (NOT_SMS_CAPABLE.has(phone.getType() ?? '')) return undefined;
  const countryCallingCode = String(phone.countryCallingCode);
  return { e164: phone.number, countryCallingCode, masked: maskMobile(phone.number, countryCallingCode), country: phone.country };
}
