import { describe, expect, it } from 'vitest';
import { knownAcrValues, meetsRequirements, parseMaxAge, requirementsOf, requiresPhr } from '../../src/core/authentication-requirements.js';
import { pinSmsAuthentication, type Authentication } from '../../src/core/authentication.js';

/** What a request asks of the sign-in (docs/journey.md, "`acr_values` and `max_age`"). */

const T0 = 1_767_225_600;
const PIN_SMS = 'urn:connect:acr:pin-sms';
const pinSms = pinSmsAuthentication(T0, 'sign_in_otp');
const passkey: Authentication = { acr: 'phr', amr: ['hwk', 'user'], authTime: T0 };

describe('knownAcrValues', () => {
  it.each([
    [undefined, []],
    ['', []],
    ['phr', ['phr']],
    ['gold silver', []],
    [`loa3 phr  ${PIN_SMS} phr`, ['phr', PIN_SMS]],
    [`${PIN_SMS} phr`, [PIN_SMS, 'phr']],
    ['PHR', []],
  ])('%j → %j: known values in order, each once, unknown ones dropped', (value, expected) => {
    expect(knownAcrValues(value)).toEqual(expected);
  });
});

describe('parseMaxAge', () => {
  it.each([
    ['0', 0],
    ['300', 300],
    ['0300', 300],
    ['2147483647', 2_147_483_647],
  ])('%s → %d', (value, expected) => {
    expect(parseMaxAge(value)).toBe(expected);
  });

  it.each(['', '-1', '+1', '1.5', '1e3', ' 1', '1 ', 'soon', '0x10', '2147483648', '99999999999', '١٢'])('%j → undefined', (value) => {
    expect(parseMaxAge(value)).toBeUndefined();
  });
});

describe('requirementsOf', () => {
  it('the weakest acr value listed is the one required: any listed may be met', () => {
    expect(requirementsOf({ acrValues: [], maxAge: null })).toEqual({ requiredAcr: null, maxAge: null });
    expect(requirementsOf({ acrValues: ['phr'], maxAge: 60 })).toEqual({ requiredAcr: 'phr', maxAge: 60 });
    expect(requirementsOf({ acrValues: ['phr', PIN_SMS], maxAge: null })).toEqual({ requiredAcr: PIN_SMS, maxAge: null });
    expect(requirementsOf({ acrValues: [PIN_SMS, 'phr'], maxAge: null })).toEqual({ requiredAcr: PIN_SMS, maxAge: null });
    expect(requiresPhr(requirementsOf({ acrValues: ['phr'], maxAge: null }))).toBe(true);
    expect(requiresPhr(requirementsOf({ acrValues: ['phr', PIN_SMS], maxAge: null }))).toBe(false);
    expect(requiresPhr(requirementsOf({ acrValues: [], maxAge: null }))).toBe(false);
  });
});

describe('meetsRequirements', () => {
  const none = { requiredAcr: null, maxAge: null };
  const phr = { requiredAcr: 'phr', maxAge: null };
  const pin = { requiredAcr: PIN_SMS, maxAge: null };

  it('phr is met only by a phr sign-in; pin-sms and no requirement by any', () => {
    expect(meetsRequirements(passkey, phr, T0)).toBe(true);
    expect(meetsRequirements(pinSms, phr, T0)).toBe(false);
    expect(meetsRequirements({ ...pinSms, acr: 'urn:other' }, phr, T0)).toBe(false);
    for (const authentication of [pinSms, passkey, { ...pinSms, acr: 'urn:other' }]) {
      expect(meetsRequirements(authentication, pin, T0)).toBe(true);
      expect(meetsRequirements(authentication, none, T0)).toBe(true);
    }
  });

  it('max_age: met while now - auth_time <= max_age, to the second', () => {
    expect(meetsRequirements(pinSms, { requiredAcr: null, maxAge: 300 }, T0 + 300)).toBe(true);
    expect(meetsRequirements(pinSms, { requiredAcr: null, maxAge: 300 }, T0 + 301)).toBe(false);
    expect(meetsRequirements(pinSms, { requiredAcr: null, maxAge: 0 }, T0)).toBe(true);
    expect(meetsRequirements(pinSms, { requiredAcr: null, maxAge: 0 }, T0 + 1)).toBe(false);
    // Both must hold.
    expect(meetsRequirements(passkey, { requiredAcr: 'phr', maxAge: 60 }, T0 + 61)).toBe(false);
    expect(meetsRequirements(passkey, { requiredAcr: 'phr', maxAge: 60 }, T0 + 60)).toBe(true);
  });

  it('an unrecorded sign-in (null) meets no phr and no max_age, but anything else', () => {
    expect(meetsRequirements(null, none, T0)).toBe(true);
    expect(meetsRequirements(null, pin, T0)).toBe(true);
    expect(meetsRequirements(null, phr, T0)).toBe(false);
    expect(meetsRequirements(null, { requiredAcr: null, maxAge: 2_147_483_647 }, T0)).toBe(false);
  });
});
