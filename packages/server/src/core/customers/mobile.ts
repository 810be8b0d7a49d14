import { getExampleNumber, isSupportedCountry, parsePhoneNumberFromString, type CountryCode } from 'libphonenumber-js/max';
import mobileExampleNumbers from 'libphonenumber-js/mobile/examples';

const NOT_SMS_CAPABLE = new Set(['FIXED_LINE', 'TOLL_FREE', 'PREMIUM_RATE', 'SHARED_COST', 'VOICEMAIL', 'PAGER', 'UAN']);

/**
 * A mobile number checked and normalised: made once, by {@link parseMobile},
 * where a number enters (a form, `user_id`, the command line), and passed on
 * as this value rather than as the string it was typed as.
 */
export interface MobileNumber {
  /** E.164, e.g. `+639171234567`. */
  readonly e164: string;
  /** The country calling code without `+`, e.g. `63`. */
  readonly countryCallingCode: string;
  /** The masked form shown to consumers (`userId`, pages, logs): {@link maskMobile}. */
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
 * SMS; `undefined` otherwise. The edge's function: a number typed or sent
 * (a form, `user_id`, the command line) is parsed here once, and the
 * {@link MobileNumber} it makes is what travels on; a stored E.164 number
 * is masked with {@link maskedMobile}. Spaces, dashes and brackets are tolerated.
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

/**
 * Where a masked mobile number is shown, which decides what stands for a
 * number that does not parse (a stored one libphonenumber no longer reads):
 * - `user_id`: the `userId` of a redirect or a profile, and an audit
 *   subject: `null`;
 * - `page`: a hosted page or the command line: the number as stored;
 * - `log`: a log line or an audit subject of an SMS send: its first three
 *   characters and `…`, never the whole number.
 */
export type MaskedMobileForm = 'user_id' | 'page' | 'log';

/** What {@link maskedMobile} returns for each form. */
export type MaskedMobile<F extends MaskedMobileForm> = F extends 'user_id' ? string | null : string;

/**
 * The masked form of a mobile number (the value, or a stored E.164 string)
 * as `form` shows it: {@link MobileNumber.masked} when it parses, else the
 * form's stand-in ({@link MaskedMobileForm}).
 *
 * @example
 * maskedMobile('+639171234567', 'page'); // '+63******4567'
 * maskedMobile('+63917', 'page'); // '+63917'
 * maskedMobile('+63917', 'log'); // '+63…'
 * maskedMobile('+63917', 'user_id'); // null
 */
export function maskedMobile<F extends MaskedMobileForm>(mobile: MobileNumber | string, form: F): MaskedMobile<F> {
  if (typeof mobile !== 'string') return mobile.masked;
  const masked = parseMobile(mobile)?.masked;
  if (masked !== undefined) return masked;
  const standIn: Record<MaskedMobileForm, string | null> = { user_id: null, page: mobile, log: `${mobile.slice(0, 3)}…` };
  return standIn[form] as MaskedMobile<F>;
}

/**
 * The E.164 form of a mobile number: the value's, or a stored one (a
 * record's `mobile`) as it is.
 */
export function e164Of(mobile: MobileNumber | string): string {
  return typeof mobile === 'string' ? mobile : mobile.e164;
}

/**
 * The mobile number of a stored customer record (E.164) as the value;
 * `undefined` for one that no longer parses.
 */
export function mobileOf(customer: { readonly mobile: string }): MobileNumber | undefined {
  return parseMobile(customer.mobile);
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
