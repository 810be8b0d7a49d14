import type { DeadEndReason, Problem } from '../../core/journey/outcomes.js';

/**
 * The hosted pages' wording of what the journey answers (`core/journey/
 * outcomes.ts`): core names a problem by its code, the page says it here.
 */

const plural = (count: number, one: string, many: string) => `${count} ${count === 1 ? one : many}`;
const minutes = (seconds: number) => plural(Math.max(1, Math.ceil(seconds / 60)), 'minute', 'minutes');

/** A problem as the page says it; `page` decides a few wordings that differ between login and registration. */
export function problemMessage(problem: Problem, page: 'login' | 'register' | 'otp'): string {
  const wait = problem.retryAfterSeconds ?? 0;
  switch (problem.code) {
    case 'mobile_invalid':
      return 'Enter your mobile number in international format, for example +63 917 123 4567.';
    case 'mobile_taken':
      return 'This mobile number already has an account. Log in instead.';
    case 'pin_format':
      return page === 'register' ? 'Choose a PIN of 4 to 6 digits.' : 'Your PIN is 4 to 6 digits.';
    case 'pin_mismatch':
      return 'The two PINs are not the same.';
    case 'pin_weak_repeated':
      return 'That PIN is too easy to guess: it repeats the same digits, like 1111 or 1212. Choose another PIN.';
    case 'pin_weak_sequence':
      return 'That PIN is too easy to guess: its digits are in order, like 1234 or 9876. Choose another PIN.';
    case 'pin_weak_common':
      return 'That PIN is one of the most common PINs and easy to guess. Choose another PIN.';
    case 'pin_wrong':
      return 'That PIN is not right.';
    case 'credentials_wrong':
      return 'The mobile number or PIN is not right.';
    case 'pin_locked':
      return `Too many wrong PINs. For your security, PIN login for this number is locked. Try again in ${minutes(wait)}.`;
    case 'account_locked':
      return 'This account is locked. Please contact customer support.';
    case 'too_many_attempts':
      return `Too many attempts were made from your network. Try again in ${minutes(wait)}.`;
    case 'otp_format':
      return 'Enter the 6-digit code from the SMS.';
    case 'otp_wrong':
      return `That code is not right. ${plural(problem.attemptsLeft ?? 0, 'try', 'tries')} left.`;
    case 'otp_exhausted':
      return 'Too many wrong codes. Ask for a new code.';
    case 'otp_expired':
      return 'This code has expired. Ask for a new code.';
    case 'otp_too_many':
      return `Too many wrong codes were entered for this number. Try again in ${minutes(wait)}.`;
    case 'sms_rate_limited':
      return `Too many codes were sent. Try again in ${minutes(wait)}.`;
    case 'sms_too_soon':
      return `You can ask for a new code in ${plural(wait, 'second', 'seconds')}.`;
    case 'sms_no_more_resends':
      return 'No more codes can be sent for this sign-in. Go back to the app and start again.';
    case 'sms_unavailable':
      return 'We could not send the code. Try again: ask for a new code.';
    case 'sms_budget_spent':
      return 'We cannot send codes right now. Try again later.';
    case 'mobile_country':
      return 'We cannot send codes to this mobile number. Use a mobile number of a country this service supports.';
  }
}

/** The notice after a new code was sent. */
export function codeSentNotice(maskedMobile: string): string {
  return `We sent a new code to ${maskedMobile}.`;
}

/** The title and text of a dead end: the customer goes back to the app. */
export function deadEndMessage(reason: DeadEndReason): { title: string; message: string } {
  switch (reason) {
    case 'expired':
      return {
        title: 'This sign-in has expired',
        message: 'This sign-in page has expired or was opened in another browser. Go back to the app and start again.',
      };
    case 'finished':
      return { title: 'This sign-in is finished', message: 'This sign-in has already finished. Go back to the app to continue.' };
    case 'client_unavailable':
      return { title: 'This sign-in cannot continue', message: 'The app that sent you here cannot sign customers in right now.' };
    case 'account_unavailable':
      return { title: 'This sign-in cannot continue', message: 'This account cannot sign in right now. Please contact customer support.' };
  }
}
