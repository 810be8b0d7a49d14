import { describe, expect, it } from 'vitest';
import { UI_LOCALES } from '../../../src/core/authorize/ui-locales.js';
import type { Problem, ProblemCode } from '../../../src/core/journey/outcomes.js';
import { fill, html } from '../../../src/http/views/html.js';
import { CATALOGUES, minutesToWait, problemMessage, type Catalogue } from '../../../src/http/views/messages/index.js';

/** Every entry of a catalogue, by its dotted path. */
function entries(catalogue: object, prefix = ''): Map<string, unknown> {
  const found = new Map<string, unknown>();
  for (const [key, value] of Object.entries(catalogue)) {
    const path = prefix ? `${prefix}.${key}` : key;
    if (value !== null && typeof value === 'object') for (const [p, v] of entries(value, path)) found.set(p, v);
    else found.set(path, value);
  }
  return found;
}

/** What an entry says: a string as it is, a counting entry at a few counts. */
function sayings(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (typeof value === 'function') return [1, 2, 12].map((n) => (value as (n: number) => string)(n));
  throw new Error(`an entry is neither text nor a function of a count: ${String(value)}`);
}

const placeholders = (text: string) => [...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();

/** Entries Filipino keeps in English, as Philippine apps do. */
const SAME_IN_BOTH = new Set(['page.pinLabel']);

const en = entries(CATALOGUES.en);

describe('the message catalogues (docs/hosted-login.md, "Languages")', () => {
  it('exist for every locale the pages speak', () => {
    expect(Object.keys(CATALOGUES).sort()).toEqual([...UI_LOCALES].sort());
  });

  it.each(UI_LOCALES.filter((l) => l !== 'en'))('%s has exactly the entries English has, each of the same kind', (locale) => {
    const other = entries(CATALOGUES[locale]);
    expect([...other.keys()].sort()).toEqual([...en.keys()].sort());
    for (const [path, value] of en) expect(typeof other.get(path), path).toBe(typeof value);
  });

  it.each(UI_LOCALES)('%s: no entry is empty, and every count appears in what a counting entry says', (locale) => {
    for (const [path, value] of entries(CATALOGUES[locale])) {
      for (const said of sayings(value)) expect(said.trim(), path).not.toBe('');
      if (typeof value === 'function') for (const n of [1, 2, 12]) expect((value as (n: number) => string)(n), path).toContain(String(n));
    }
  });

  it.each(UI_LOCALES.filter((l) => l !== 'en'))('%s: every entry is translated (except those kept in English) with the same placeholders', (locale) => {
    const other = entries(CATALOGUES[locale]);
    for (const [path, value] of en) {
      const english = sayings(value);
      const translated = sayings(other.get(path));
      english.forEach((said, i) => {
        expect(placeholders(translated[i] as string), path).toEqual(placeholders(said));
        if (SAME_IN_BOTH.has(path)) expect(translated[i], path).toBe(said);
        else expect(translated[i], path).not.toBe(said);
      });
    }
  });

  it('fills placeholders with escaped values, and refuses a placeholder without a value', () => {
    expect(fill('{client} wants <this>', { client: html`<strong>${'A & B'}</strong>` }).value).toBe('<strong>A &amp; B</strong> wants &lt;this&gt;');
    expect(fill('Allow {client}?', { client: '<script>' }).value).toBe('Allow &lt;script&gt;?');
    expect(() => fill('Allow {client}?')).toThrow(/\{client\}/);
  });
});

describe('waits are said as durations, never as clock times', () => {
  const waiting: ReadonlyArray<readonly [ProblemCode, string, string]> = [
    ['pin_locked', 'Try again in 12 minutes.', 'Subukang muli pagkalipas ng 12 minuto.'],
    ['too_many_attempts', 'Try again in 12 minutes.', 'Subukang muli pagkalipas ng 12 minuto.'],
    ['otp_too_many', 'Try again in 12 minutes.', 'Subukang muli pagkalipas ng 12 minuto.'],
    ['sms_rate_limited', 'Try again in 12 minutes.', 'Subukang muli pagkalipas ng 12 minuto.'],
  ];

  it.each(waiting)('%s: 11 min 30 s to wait is "12 minutes" in English and Filipino', (code, english, filipino) => {
    const problem: Problem = { code, retryAfterSeconds: 690 };
    expect(problemMessage(CATALOGUES.en, problem, 'login', 'Acme')).toContain(english);
    expect(problemMessage(CATALOGUES.fil, problem, 'login', 'Acme')).toContain(filipino);
  });

  it('rounds a wait up to whole minutes, at least one, and says one minute in the singular', () => {
    expect([1, 59, 60, 61, 900].map(minutesToWait)).toEqual([1, 1, 1, 2, 15]);
    expect(problemMessage(CATALOGUES.en, { code: 'pin_locked', retryAfterSeconds: 30 }, 'login', 'Acme')).toContain('Try again in 1 minute.');
    expect(problemMessage(CATALOGUES.fil, { code: 'pin_locked', retryAfterSeconds: 30 }, 'login', 'Acme')).toContain('pagkalipas ng 1 minuto.');
  });

  it.each(UI_LOCALES)('%s: no entry shows a time of day or a date', (locale) => {
    for (const [path, value] of entries(CATALOGUES[locale])) {
      for (const said of sayings(value)) {
        expect(said, path).not.toMatch(/\b\d{1,2}:\d{2}\b|\bUTC\b|\bGMT\b|\b\d{4}-\d{2}-\d{2}\b|\b[AP]M\b/);
      }
    }
  });

  it('says the seconds until a new code, and the tries left', () => {
    expect(problemMessage(CATALOGUES.en, { code: 'sms_too_soon', retryAfterSeconds: 30 }, 'otp', 'Acme')).toBe('You can ask for a new code in 30 seconds.');
    expect(problemMessage(CATALOGUES.fil, { code: 'sms_too_soon', retryAfterSeconds: 30 }, 'otp', 'Acme')).toBe('Puwede kang humingi ng bagong code pagkalipas ng 30 segundo.');
    expect(problemMessage(CATALOGUES.en, { code: 'otp_wrong', attemptsLeft: 1 }, 'otp', 'Acme')).toBe('That code is not right. 1 try left.');
    expect(problemMessage(CATALOGUES.fil, { code: 'otp_wrong', attemptsLeft: 3 }, 'otp', 'Acme')).toBe('Mali ang code na iyan. 3 subok na lang ang natitira.');
  });

  it('words pin_format for the page: a PIN is chosen on registration', () => {
    const text: Catalogue = CATALOGUES.en;
    expect(problemMessage(text, { code: 'pin_format' }, 'register', 'Acme')).toBe('Choose a PIN of 4 to 6 digits.');
    expect(problemMessage(text, { code: 'pin_format' }, 'login', 'Acme')).toBe('Your PIN is 4 to 6 digits.');
  });
});
