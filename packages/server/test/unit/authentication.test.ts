import { describe, expect, it } from 'vitest';
import {
  ACR_PIN_SMS,
  ACR_VALUES_SUPPORTED,
  authenticationClaims,
  authenticationOfClaims,
  pinSmsAuthentication,
} from '../../src/core/authentication.js';

const T0 = 1_767_225_600;

describe('pinSmsAuthentication', () => {
  it.each(['sign_in_otp', 'reset_otp'] as const)('%s: acr pin-sms, amr pin sms mfa (RFC 8176), auth_time as given', (proof) => {
    // The reset's code proved the phone by SMS just as the sign-in's own would have.
    expect(pinSmsAuthentication(T0, proof)).toEqual({ acr: 'urn:connect:acr:pin-sms', amr: ['pin', 'sms', 'mfa'], authTime: T0 });
  });

  it('is the one acr value discovery lists', () => {
    expect(ACR_VALUES_SUPPORTED).toEqual(['phr', ACR_PIN_SMS]);
  });
});

describe('authenticationClaims and authenticationOfClaims', () => {
  it('write acr, amr and auth_time, and read them back', () => {
    const signIn = pinSmsAuthentication(T0, 'sign_in_otp');
    const claims = authenticationClaims(signIn);
    expect(claims).toEqual({ acr: ACR_PIN_SMS, amr: ['pin', 'sms', 'mfa'], auth_time: T0 });
    expect(authenticationOfClaims(claims)).toEqual(signIn);
  });

  it('write no claim for an unknown sign-in, and read none from a token without all three', () => {
    expect(authenticationClaims(null)).toEqual({});
    expect(authenticationClaims(undefined)).toEqual({});
    expect(authenticationOfClaims({})).toBeNull();
    expect(authenticationOfClaims({ acr: ACR_PIN_SMS, amr: ['pin'] })).toBeNull();
    expect(authenticationOfClaims({ acr: ACR_PIN_SMS, amr: 'pin', auth_time: T0 })).toBeNull();
    expect(authenticationOfClaims({ acr: 7, amr: ['pin'], auth_time: T0 })).toBeNull();
  });
});
