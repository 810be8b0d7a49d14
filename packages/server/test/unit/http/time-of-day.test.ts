import { describe, expect, it } from 'vitest';
import { timeOfDay, timeZoneOfCountry } from '../../../src/http/views/time-of-day.js';

/** 2026-01-01T00:00:00Z: 8:00 AM in Manila (UTC+8, no daylight saving). */
const T0 = Date.UTC(2026, 0, 1) / 1000;

/** The time and the zone's name, whatever space ICU puts before AM/PM. */
const spaced = (text: string) => text.replace(/\s/gu, ' ');

describe('timeOfDay: when a new code can be asked for, as a phone shows the time (docs/hosted-login.md, "The resend countdown")', () => {
  it('says a +63 number\'s time in Philippine time, named, in English and Filipino', () => {
    expect(spaced(timeOfDay(T0, 'PH', 'en'))).toMatch(/^8:00 AM Philippines? (Standard )?Time$/);
    expect(spaced(timeOfDay(T0, 'PH', 'fil'))).toMatch(/^8:00 AM .*Oras sa Pilipinas$/);
  });

  it('rounds up to the whole minute, so the time said is never too early', () => {
    expect(spaced(timeOfDay(T0 + 1, 'PH', 'en'))).toMatch(/^8:01 AM /);
    expect(spaced(timeOfDay(T0 + 30, 'PH', 'en'))).toMatch(/^8:01 AM /);
    expect(spaced(timeOfDay(T0 + 60, 'PH', 'en'))).toMatch(/^8:01 AM /);
    expect(spaced(timeOfDay(T0 + 61, 'PH', 'en'))).toMatch(/^8:02 AM /);
    expect(spaced(timeOfDay(T0 + 4 * 3600 + 59 * 60 + 30, 'PH', 'fil'))).toMatch(/^1:00 PM /);
  });

  it('uses the one zone of another country, and UTC, named, for a country of several zones or none', () => {
    expect(timeZoneOfCountry('PH')).toBe('Asia/Manila');
    expect(timeZoneOfCountry('JP')).toBe('Asia/Tokyo');
    expect(timeZoneOfCountry('US')).toBeUndefined();
    expect(spaced(timeOfDay(T0, 'JP', 'en'))).toMatch(/^9:00 AM /);
    expect(spaced(timeOfDay(T0, 'US', 'en'))).toBe('12:00 AM UTC');
    expect(spaced(timeOfDay(T0, undefined, 'fil'))).toBe('12:00 AM UTC');
  });
});
