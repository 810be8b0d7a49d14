/** The languages the hosted pages speak: English and Filipino (docs/hosted-login.md, "Languages"). */
export const UI_LOCALES = ['en', 'fil'] as const;

/** A language the hosted pages speak, by its BCP 47 tag. */
export type UiLocale = (typeof UI_LOCALES)[number];

/** Whether `value` is a {@link UiLocale}. */
export function isUiLocale(value: unknown): value is UiLocale {
  return (UI_LOCALES as readonly unknown[]).includes(value);
}

/**
 * The language a BCP 47 language tag asks for, when the hosted pages speak
 * it: `en` and its regional variants (`en-PH`, `en-US`) are English; `fil`
 * and `tl` (Tagalog, on which Filipino is based) and theirs (`fil-PH`,
 * `tl-PH`) are Filipino. Compared without regard to case (RFC 5646 §2.1.1).
 *
 * @example
 * localeOfTag('fil-PH'); // 'fil'
 * localeOfTag('EN-us'); // 'en'
 * localeOfTag('de'); // undefined
 */
export function localeOfTag(tag: string): UiLocale | undefined {
  const language = tag.trim().toLowerCase().split('-')[0];
  if (language === 'en') return 'en';
  if (language === 'fil' || language === 'tl') return 'fil';
  return undefined;
}

/**
 * The language `ui_locales` chooses (OpenID Connect Core §3.1.2.1): a
 * space-separated list of BCP 47 tags, most preferred first; the first one
 * the hosted pages speak wins. `null` when the parameter is absent, not a
 * single string, or names no language they speak: that is not an error,
 * and the browser's `Accept-Language` decides instead.
 *
 * @example
 * pickUiLocale('de fil-PH en'); // 'fil'
 * pickUiLocale('ja'); // null
 */
export function pickUiLocale(value: unknown): UiLocale | null {
  if (typeof value !== 'string') return null;
  for (const tag of value.split(' ')) {
    const locale = tag === '' ? undefined : localeOfTag(tag);
    if (locale) return locale;
  }
  return null;
}
