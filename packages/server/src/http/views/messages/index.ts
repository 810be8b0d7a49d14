import type { UiLocale } from '../../../core/authorize/ui-locales.js';
import type { Problem } from '../../../core/journey/outcomes.js';
import type { Catalogue } from './catalogue.js';
import { en } from './en.js';
import { fil } from './fil.js';

export type { Catalogue } from './catalogue.js';

/** Every language's catalogue, by locale. */
export const CATALOGUES: Readonly<Record<UiLocale, Catalogue>> = { en, fil };

/** The language a page is in: its locale (for `<html lang>` and `Content-Language`) and its wording. */
export interface Language {
  readonly locale: UiLocale;
  readonly text: Catalogue;
}

/** The {@link Language} of `locale`. */
export function languageOf(locale: UiLocale): Language {
  return { locale, text: CATALOGUES[locale] };
}

/** Whole minutes to wait, rounded up, at least 1: a wait is said as a duration, never a clock time. */
export function minutesToWait(seconds: number): number {
  return Math.max(1, Math.ceil(seconds / 60));
}

/** A page that says problems. */
export type ProblemPage = 'login' | 'register' | 'otp' | 'reset' | 'reset_otp' | 'new_pin';

/**
 * A problem as the page says it (core names it by its code); `page` picks
 * the wording of `pin_format` on the registration and new-PIN pages, where
 * a PIN is chosen; `clientName` fills `{client}` (whose customer support to
 * contact); `mobileExample`, the example number `mobile_invalid` shows, as
 * customers of `CONNECT_DEFAULT_COUNTRY` type it.
 */
export function problemMessage(text: Catalogue, problem: Problem, page: ProblemPage, clientName: string, mobileExample = '0917 123 4567'): string {
  const { problems } = text;
  const wait = problem.retryAfterSeconds ?? 0;
  switch (problem.code) {
    case 'mobile_invalid':
      return problems.mobile_invalid.replace('{example}', mobileExample);
    case 'pin_format':
      return page === 'register' || page === 'new_pin' ? problems.pin_format_new : problems.pin_format;
    case 'pin_locked':
    case 'too_many_attempts':
    case 'otp_too_many':
    case 'sms_rate_limited':
      return problems[problem.code](minutesToWait(wait));
    case 'sms_too_soon':
      return problems.sms_too_soon(Math.max(1, Math.ceil(wait)));
    case 'otp_wrong':
      return problems.otp_wrong(problem.attemptsLeft ?? 0);
    case 'account_locked':
      return problems.account_locked.replaceAll('{client}', clientName);
    default:
      return problems[problem.code];
  }
}
