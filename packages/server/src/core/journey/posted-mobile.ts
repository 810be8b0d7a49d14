import { parseMobile, pinDestinationRefusal, type MobileNumber } from '../customers/mobile.js';
import type { JourneyDeps } from './deps.js';
import type { OpenJourney } from './open.js';
import type { Problem } from './outcomes.js';

/** A mobile field a form cannot go on with: the problem, and the number its page shows again. */
export interface MobileRefused {
  readonly problem: Problem;
  readonly shown: string | undefined;
}

/**
 * The mobile number a login, registration or PIN-reset form is for, made
 * here once as the value the step passes on: the journey's `user_id` (its
 * stored E.164) when it has one, whatever was posted; else the number
 * typed, read as customers of `CONNECT_DEFAULT_COUNTRY` type it
 * (docs/hosted-login.md, "Mobile numbers"). Refused when it is no mobile
 * number (`mobile_invalid`), or one one-time PINs may not go to
 * (`mobile_country`: of no country, or of one `CONNECT_SMS_COUNTRIES` does
 * not list, docs/operator-guide.md, "SMS budgets"), before anything is
 * counted or sent.
 */
export function postedMobile(
  journey: OpenJourney,
  typed: string | undefined,
  deps: Pick<JourneyDeps, 'smsCountries' | 'defaultCountry'>,
): MobileNumber | MobileRefused {
  const hint = journey.record.loginHint;
  const mobile = hint !== null ? parseMobile(hint) : parseMobile(typed ?? '', { defaultCountry: deps.defaultCountry });
  if (mobile === undefined) {
    return hint !== null ? { problem: { code: 'mobile_country', field: 'mobile' }, shown: hint } : { problem: { code: 'mobile_invalid', field: 'mobile' }, shown: typed };
  }
  if (pinDestinationRefusal(mobile, deps.smsCountries) !== undefined) return { problem: { code: 'mobile_country', field: 'mobile' }, shown: mobile.e164 };
  return mobile;
}

/** Whether {@link postedMobile} refused the form's mobile. */
export function isRefused(mobile: MobileNumber | MobileRefused): mobile is MobileRefused {
  return 'problem' in mobile;
}
