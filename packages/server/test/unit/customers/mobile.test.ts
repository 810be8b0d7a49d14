import { describe, expect, it } from 'vitest';
import { isSmsCountry, maskedMobile, maskMobile, mobileExample, mobileOf, parseMobile, pinDestinationRefusal, type MobileNumber } from '../../../src/core/customers/mobile.js';

describe('parseMobile', () => {
  it.each([
    ['+639171234567', '+639171234567', '63', '+63******4567', 'PH'],
    ['+63 917 123 4567', '+639171234567', '63', '+63******4567', 'PH'],
    ['  +63-917-123-4567  ', '+639171234567', '63', '+63******4567', 'PH'],
    ['+63 (917) 123-4567', '+639171234567', '63', '+63******4567', 'PH'],
    ['+63.917.123.4567', '+639171234567', '63', '+63******4567', 'PH'],
    ['+44 7911 123456', '+447911123456', '44', '+44******3456', 'GG'],
    ['+49 151 23456789', '+4915123456789', '49', '+49*******6789', 'DE'],
    ['+65 9123 4567', '+6591234567', '65', '+65****4567', 'SG'],
    // NANP numbers do not tell mobile from fixed line: accepted.
    ['+1 650 253 0000', '+16502530000', '1', '+1******0000', 'US'],
  ])('normalises %j to E.164', (input, e164, countryCallingCode, masked, country) => {
    expect(parseMobile(input)).toEqual({ e164, countryCallingCode, masked, country });
  });

  it.each([
    ['no leading +', '639171234567'],
    ['national format', '09171234567'],
    ['doubled +', '++639171234567'],
    ['too short', '+63917123'],
    ['too long', '+6391712345678'],
    ['unknown country code', '+999 1234567'],
    ['letters', '+63917abc4567'],
    ['an extension', '+63 917 123 4567 ext 9'],
    ['only +', '+'],
    ['empty', ''],
    ['over 32 characters', `+63 917 123 4567${' '.repeat(20)}0`],
  ])('refuses %s (%j)', (_why, input) => {
    expect(parseMobile(input)).toBeUndefined();
  });

  it.each([
    ['a Philippine fixed line', '+63 2 8123 4567'],
    ['a London fixed line', '+44 20 7946 0958'],
    ['a Berlin fixed line', '+49 30 123456'],
    ['a Singapore fixed line', '+65 6123 4567'],
    ['a US toll-free number', '+1 800 253 0000'],
    ['a US premium-rate number', '+1 900 555 0123'],
    ['a French shared-cost number', '+33 810 12 34 56'],
    ['a French premium-rate number', '+33 8 12 34 56 78'],
    ['a UK premium-rate number', '+44 843 123 4567'],
  ])('refuses %s: it cannot receive the SMS', (_why, input) => {
    expect(parseMobile(input)).toBeUndefined();
  });
});

describe('parseMobile with a default country (CONNECT_DEFAULT_COUNTRY): numbers as customers type them', () => {
  it.each([
    ['PH', '0917 123 4567', '+639171234567'],
    ['PH', '09171234567', '+639171234567'],
    ['PH', ' 0917-123-4567 ', '+639171234567'],
    ['PH', '(0917) 123 4567', '+639171234567'],
    ['PH', '917 123 4567', '+639171234567'],
    ['PH', '+63 917 123 4567', '+639171234567'],
    ['PH', '0063 917 123 4567', '+639171234567'],
    // The international format keeps its own country, whatever the default.
    ['PH', '+65 9123 4567', '+6591234567'],
    ['SG', '9123 4567', '+6591234567'],
    ['SG', '+63 917 123 4567', '+639171234567'],
    ['GB', '07911 123456', '+447911123456'],
  ])('%s: %j is %s', (country, input, e164) => {
    expect(parseMobile(input, { defaultCountry: country })?.e164).toBe(e164);
  });

  it.each([
    ['PH', 'one digit short', '0917 123 456'],
    ['PH', 'one digit too many', '0917 123 45678'],
    ['PH', 'a Manila fixed line', '02 8123 4567'],
    ['PH', 'a + inside', '0917+1234567'],
    ['PH', 'letters', '0917 ABC 4567'],
    ['PH', 'an extension', '0917 123 4567 ext 9'],
    ['PH', 'empty', ''],
    ['SG', 'a Philippine national number', '0917 123 4567'],
    ['SG', 'a Singapore fixed line', '6123 4567'],
    ['XX', 'a national number with no country to read it by', '0917 123 4567'],
  ])('%s: refuses %s (%j)', (country, _why, input) => {
    expect(parseMobile(input, { defaultCountry: country })).toBeUndefined();
  });

  it('without a default country only the international format is read (user_id, the command line)', () => {
    expect(parseMobile('0917 123 4567')).toBeUndefined();
    expect(parseMobile('0917 123 4567', {})).toBeUndefined();
  });
});

describe('mobileExample', () => {
  it.each([
    ['PH', '0917 123 4567', '+63 917 123 4567'],
    ['SG', '8123 4567', '+65 8123 4567'],
    ['GB', '07400 123456', '+44 7400 123456'],
  ])('%s: %s, or %s', (country, national, international) => {
    expect(mobileExample(country)).toEqual({ national, international });
    // The example reads back as a mobile of that country.
    expect(parseMobile(national, { defaultCountry: country })?.country).toBe(country);
  });
});

describe('pinDestinationRefusal', () => {
  const mobile = (value: string) => parseMobile(value) as MobileNumber;

  it.each([
    ['an Iridium satellite phone', '+881 631 234 567'],
    ['an Inmarsat phone', '+870 773 111 111'],
    ['an international network number', '+882 3123 456789'],
  ])('refuses %s whatever the countries: it belongs to no country', (_why, input) => {
    expect(mobile(input).country).toBeUndefined();
    expect(pinDestinationRefusal(mobile(input), undefined)).toBe('no_country');
    expect(pinDestinationRefusal(mobile(input), ['PH'])).toBe('no_country');
  });

  it('allows every country when no list is configured, else only the listed ones', () => {
    expect(pinDestinationRefusal(mobile('+639171234567'), undefined)).toBeUndefined();
    expect(pinDestinationRefusal(mobile('+639171234567'), ['SG', 'PH'])).toBeUndefined();
    expect(pinDestinationRefusal(mobile('+6591234567'), ['PH'])).toBe('country_not_allowed');
    // +1 is shared by several countries: the number's own country counts.
    expect(pinDestinationRefusal(mobile('+1 650 253 0000'), ['CA'])).toBe('country_not_allowed');
  });

  it('knows the ISO 3166 alpha-2 codes with telephone numbers', () => {
    expect(isSmsCountry('PH')).toBe(true);
    expect(isSmsCountry('ph')).toBe(false);
    expect(isSmsCountry('XX')).toBe(false);
    expect(isSmsCountry('PHL')).toBe(false);
  });
});

describe('maskMobile', () => {
  it('keeps the country code and the last 4 digits, every other digit becomes *', () => {
    expect(maskMobile('+639171234567', '63')).toBe('+63******4567');
    expect(maskMobile('+14155552671', '1')).toBe('+1******2671');
    expect(maskMobile('+6591234567', '65')).toBe('+65****4567');
  });

  it('never shows more than the last 4 digits of the national number', () => {
    const masked = maskMobile('+447911123456', '44');
    expect(masked).toBe('+44******3456');
    expect(masked.replace(/\*/g, '')).toBe('+443456');
  });
});

describe('maskedMobile', () => {
  // Each form as the pages, the command line, `userId` and the logs showed it
  // before one function made them all.
  const before = {
    page: (stored: string) => parseMobile(stored)?.masked ?? stored,
    user_id: (stored: string) => parseMobile(stored)?.masked ?? null,
    log: (stored: string) => parseMobile(stored)?.masked ?? `${stored.slice(0, 3)}…`,
  };
  const numbers = [
    ['+639171234567', '+63******4567'],
    ['+14155552671', '+1******2671'],
    ['+6591234567', '+65****4567'],
    ['+447911123456', '+44******3456'],
    ['+881631234567', '+881*****4567'],
    ['+63 917 123 4567', '+63******4567'],
    ['+63917', undefined],
    ['09171234567', undefined],
    ['', undefined],
    ['+1800 555 0199', undefined],
  ] as const;

  it.each(numbers)('%s: every form as before', (stored, masked) => {
    for (const form of ['page', 'user_id', 'log'] as const) {
      expect(maskedMobile(stored, form)).toBe(before[form](stored));
    }
    if (masked !== undefined) {
      expect(maskedMobile(stored, 'page')).toBe(masked);
      expect(maskedMobile(stored, 'user_id')).toBe(masked);
      expect(maskedMobile(stored, 'log')).toBe(masked);
    }
  });

  it('stands in for a number that does not parse, by form', () => {
    expect(maskedMobile('+63917', 'page')).toBe('+63917');
    expect(maskedMobile('+63917', 'user_id')).toBeNull();
    expect(maskedMobile('+63917', 'log')).toBe('+63…');
  });

  it('masks the value it is given without parsing it again', () => {
    const mobile = parseMobile('0917 123 4567', { defaultCountry: 'PH' }) as MobileNumber;
    expect(mobile).toEqual({ e164: '+639171234567', countryCallingCode: '63', masked: '+63******4567', country: 'PH' });
    for (const form of ['page', 'user_id', 'log'] as const) expect(maskedMobile(mobile, form)).toBe('+63******4567');
  });

  it("reads a customer record's mobile as the value", () => {
    expect(mobileOf({ mobile: '+639171234567' })?.masked).toBe('+63******4567');
    expect(mobileOf({ mobile: '+63917' })).toBeUndefined();
  });
});
