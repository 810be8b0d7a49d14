import { getExampleNumber, isSupportedCountry, parsePhoneNumberFromString, type CountryCode } from 'libphonenumber-js/max';
import mobileExampleNumbers from 'libphonenumber-js/mobile/examples';
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
 * Parses a mobile number and checks it is a valid number that can receive
 * SMS; `undefined` otherwise. Spaces, dashes and brackets are tolerated.
 * Without `defaultCountry` only the international format is read (`+` and
 * country code: `user_id`, the command line). With it (`CONNECT_DEFAULT_COUNTRY`,
 * the hosted pages' mobile fields) a number as customers of that country
 * type it is read too: `0917 123 4567`, `09171234567`, `917 123 4567`, the
 * international dialling prefix (`0063 917 123 4567`), and the
 * international format still; docs/hosted-login.md, "Mobile numbers".
 * Either way the result is E.164.
 *
 * @example
 * parseMobile('0917 123 4567', { defaultCountry: 'PH' })?.e164; // '+639171234567'
 * parseMobile('0917 123 4567'); // undefined
 */
export function parseMobile(value: string, options: { readonly defaultCountry?: string | undefined } = {}): MobileNumber | undefined {
  const trimmed = value.trim();
  const { defaultCountry } = options;
  const national = defaultCountry !== undefined && isSmsCountry(defaultCountry);
  if (!(trimmed.startsWith('+') || (national && /^[\d(]/.test(trimmed))) || trimmed.length > 32 || /[^+\d\s().-]/.test(trimmed)) return undefined;
  // A `+` only at the start: `0917+123` is no number.
  if (trimmed.lastIndexOf('+') > 0) return undefined;
  const phone = national ? parsePhoneNumberFromString(trimmed, defaultCountry as CountryCode) : parsePhoneNumberFromString(trimmed);
  if (!phone?.isValid()) return undefined;
  // The one-time PIN goes by SMS: refuse numbers that cannot receive one. Some
  // countries do not tell mobile from fixed-line numbers; those are accepted.
  if (NOT_SMS_CAPABLE.has(phone.getType() ?? '')) return undefined;
  const countryCallingCode = String(phone.countryCallingCode);
  return { e164: phone.number, countryCallingCode, masked: maskMobile(phone.number, countryCallingCode), country: phone.country };
}

/** An example mobile number of a country, as its customers type it and in international format. */
export interface MobileExample {
  /** e.g. `0917 123 4567`. */
  readonly national: string;
  /** e.g. `+63 917 123 4567`. */
  readonly international: string;
}

/** Numbers customers know better than libphonenumber's examples (`0905…` for the Philippines). */
const FAMILIAR_EXAMPLES: Readonly<Record<string, string>> = { PH: '+639171234567' };

/**
 * The example mobile number the hosted pages show for `country`
 * (`CONNECT_DEFAULT_COUNTRY`): for the Philippines `0917 123 4567`, for
 * another country libphonenumber's example mobile of it.
 */
export function mobileExample(country: string): MobileExample {
  const familiar = FAMILIAR_EXAMPLES[country];
  const phone = familiar ? parsePhoneNumberFromString(familiar) : getExampleNumber(country as CountryCode, mobileExampleNumbers);
  if (!phone) return { national: '+63 917 123 4567', international: '+63 917 123 4567' };
  return { national: phone.formatNational(), international: phone.formatInternational() };
}
