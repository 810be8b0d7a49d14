import type { UiLocale } from '../authorize/ui-locales.js';

/** What a one-time-PIN SMS says, and in which language. */
export interface OneTimePinMessageInput {
  /** The 6-digit code. */
  readonly code: string;
  /** The consumer the customer is linking (named in a sign-in's message, not in a reset's). */
  readonly clientName: string;
  readonly ttlSeconds: number;
  /** The code is for a PIN reset, and the text says so. */
  readonly reset?: boolean | undefined;
  /** The journey's language (docs/hosted-login.md, "SMS delivery"). */
  readonly locale: UiLocale;
  /**
   * The host of the auth URL, where the code is entered, without its port:
   * the origin-bound last line names it.
   */
  readonly authHost: string;
}

type Wording = (input: { code: string; client: string; minutes: number; reset: boolean }) => string;

/**
 * The text above the last line, by language. Worded as the pages word it:
 * a "code" (Filipino keeps the English word, as the pages do); it names
 * Connect, the consumer (or, for a PIN reset, what the code is for) and the
 * expiry, and warns never to share the code.
 */
const WORDING: Readonly<Record<UiLocale, Wording>> = {
  en: ({ code, client, minutes, reset }) => {
    const expiry = `It expires in ${minutes} minute${minutes === 1 ? '' : 's'}. Never share this code with anyone, not even Connect staff.`;
    return reset
      ? `${code} is your Connect code to reset your PIN. ${expiry} Did not ask for it? Ignore this message: your PIN stays the same.`
      : `${code} is your Connect code to link your account to ${client}. ${expiry}`;
  },
  fil: ({ code, client, minutes, reset }) => {
    const expiry = `Mag-e-expire ito pagkalipas ng ${minutes} minuto. Huwag itong ibigay kahit kanino, kahit sa staff ng Connect.`;
    return reset
      ? `${code} ang iyong Connect code para i-reset ang iyong PIN. ${expiry} Hindi mo ito hiningi? Huwag pansinin ang mensaheng ito: hindi magbabago ang iyong PIN.`
      : `${code} ang iyong Connect code para i-link ang iyong account sa ${client}. ${expiry}`;
  },
};

/**
 * The one-time-PIN SMS, in the journey's language, ending with the
 * origin-bound line of the WICG "Origin-bound one-time codes delivered via
 * SMS" format, `@<host> #<code>`, so that phones offer to fill the code
 * into the page's `autocomplete="one-time-code"` field, and only on that
 * host. The host is the auth URL's without its port: the format's host is
 * a domain, with neither scheme nor port (browsers take `https`). It never
 * carries the customer's PIN.
 *
 * @example
 * oneTimePinMessage({ code: '123456', clientName: 'Acme', ttlSeconds: 300, locale: 'en', authHost: 'auth.example.com' });
 * // '123456 is your Connect code to link your account to Acme. It expires in 5 minutes. …\n\n@auth.example.com #123456'
 */
export function oneTimePinMessage(input: OneTimePinMessageInput): string {
  const minutes = Math.max(1, Math.round(input.ttlSeconds / 60));
  const text = WORDING[input.locale]({ code: input.code, client: input.clientName, minutes, reset: input.reset ?? false });
  return `${text}\n\n@${input.authHost} #${input.code}`;
}

/** The host the origin-bound line names: the auth URL's, without scheme, port or path. */
export function authHostOf(authUrl: string): string {
  return new URL(authUrl).hostname;
}
