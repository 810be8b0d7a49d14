import { parsePhoneNumberFromString } from 'libphonenumber-js/max';
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
  return { e164: phone.number, countryCallingCode, masked: maskMobile(phone.number, countryCallingCode) };
}
