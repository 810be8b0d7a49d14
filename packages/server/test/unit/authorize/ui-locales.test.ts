import { describe, expect, it } from 'vitest';
import { isUiLocale, localeOfTag, pickUiLocale, UI_LOCALES } from '../../../src/core/authorize/ui-locales.js';

describe('ui_locales (docs/hosted-login.md, "Languages")', () => {
  it.each([
    ['en', 'en'],
    ['EN', 'en'],
    ['en-PH', 'en'],
    ['en-US', 'en'],
    ['fil', 'fil'],
    ['fil-PH', 'fil'],
    ['FIL-ph', 'fil'],
    ['tl', 'fil'],
    ['tl-PH', 'fil'],
    ['es', undefined],
    ['english', undefined],
    ['filipino', undefined],
    ['e', undefined],
    ['', undefined],
  ] as const)('the tag %j: %j', (tag, locale) => {
    expect(localeOfTag(tag)).toBe(locale);
  });

  it.each([
    ['fil', 'fil'],
    ['en fil', 'en'],
    ['fil en', 'fil'],
    ['ja ko tl-PH en', 'fil'],
    ['de  en-GB', 'en'],
    ['ja ko', null],
    ['', null],
    [' ', null],
    [undefined, null],
    [['fil', 'en'], null],
    [42, null],
  ] as const)('ui_locales=%j: %j (the first tag spoken wins; none is no error)', (value, locale) => {
    expect(pickUiLocale(value)).toBe(locale);
  });

  it('knows the locales the catalogues speak, and no other', () => {
    expect(UI_LOCALES).toEqual(['en', 'fil']);
    expect(UI_LOCALES.every(isUiLocale)).toBe(true);
    for (const other of ['tl', 'EN', '', null, undefined]) expect(isUiLocale(other)).toBe(false);
  });
});
