import type { LimitName } from '../../core/journey/outcomes.js';
import {
  OTP_WRONG_ENTRIES_PER_MOBILE,
  PIN_LOCK_SECONDS,
  PIN_MAX_ATTEMPTS,
  RESET_OTP_WRONG_ENTRIES_PER_ADDRESS,
  RESET_SMS_PER_DEVICE,
  RESET_SMS_PER_REQUESTER,
  RESET_SMS_UNSOLICITED_PER_MOBILE,
} from '../../core/lifetimes.js';

const minutes = (seconds: number) => `${seconds / 60} minutes`;

/**
 * For the developer, in the sandbox only: what sets the limit a page
 * refused with (docs/journey.md, "Limits in the sandbox"). In English, like
 * a request error's details; production pages never name a variable.
 */
const LIMIT_NOTES: Readonly<Record<LimitName, string>> = {
  sms_per_mobile: 'Sandbox: codes sent to one mobile number per 15 minutes, set by CONNECT_SMS_LIMIT_PER_MOBILE.',
  sms_per_address: 'Sandbox: codes asked for from one client address per hour, set by CONNECT_SMS_LIMIT_PER_ADDRESS.',
  sms_global: 'Sandbox: codes sent per hour by the whole deployment, set by CONNECT_SMS_LIMIT_GLOBAL (by default the sandbox has no such budget).',
  pin_per_address: 'Sandbox: failed PIN checks from one client address per hour, set by CONNECT_PIN_LIMIT_PER_ADDRESS.',
  journey_per_address: 'Sandbox: sign-ins started from one client address per hour, set by CONNECT_JOURNEY_LIMIT_PER_ADDRESS.',
  pin_lock: `Sandbox: ${PIN_MAX_ATTEMPTS} wrong PINs in a row lock PIN login for ${minutes(PIN_LOCK_SECONDS)}, a fixed rule that no variable sets; connect-auth customers unlock lifts the lock.`,
  otp_per_mobile: `Sandbox: ${OTP_WRONG_ENTRIES_PER_MOBILE} wrong codes per mobile number per hour, a fixed rule that no variable sets.`,
  reset_sms_per_requester: `Sandbox: ${RESET_SMS_PER_REQUESTER} unsolicited codes (PIN resets and registrations) to one mobile number from one client address per hour, a fixed rule that no variable sets.`,
  reset_sms_unsolicited: `Sandbox: ${RESET_SMS_UNSOLICITED_PER_MOBILE} unsolicited codes (PIN resets and registrations) to one mobile number per hour from browsers that have not signed in as its owner, over every client address, a fixed rule that no variable sets.`,
  reset_sms_per_device: `Sandbox: ${RESET_SMS_PER_DEVICE} PIN-reset codes per hour to a browser that has signed in as the customer before, a fixed rule that no variable sets.`,
  reset_otp_per_address: `Sandbox: ${RESET_OTP_WRONG_ENTRIES_PER_ADDRESS} wrong PIN-reset codes from one client address per hour, a fixed rule that no variable sets.`,
};

/** The sandbox's note on `limit`, or nothing outside the sandbox or without a limit. */
export function limitNote(limit: LimitName | undefined, sandbox: boolean): string | undefined {
  return sandbox && limit ? LIMIT_NOTES[limit] : undefined;
}
