import type { UiLocale } from '../../core/authorize/ui-locales.js';

/** `Intl.Locale` of a region: `timeZones` in Node 20 and 22, `getTimeZones()` from Node 24 (ECMA-402 Intl Locale Info). */
type RegionLocale = Intl.Locale & { readonly timeZones?: readonly string[]; getTimeZones?: () => readonly string[] };

const zones = new Map<string, string | undefined>();

/** The one time zone of a country, or `undefined` when it has several (or the runtime cannot tell). */
export function timeZoneOfCountry(country: string): string | undefined {
  if (!zones.has(country)) {
    let found: string | undefined;
    try {
      const region = new Intl.Locale(`und-${country}`) as RegionLocale;
      const all = region.getTimeZones?.() ?? region.timeZones;
      found = all?.length === 1 ? all[0] : undefined;
    } catch {
      // Not a region ICU knows: no zone.
    }
    zones.set(country, found);
  }
  return zones.get(country);
}

/**
 * `epochSeconds` as the time of day a customer reads on their phone's
 * clock (docs/hosted-login.md, "The resend countdown"): in the time zone
 * of the mobile number's country when that country has exactly one (the
 * Philippines: `Asia/Manila`), else in UTC; rounded up to the whole
 * minute, since a phone's clock shows no seconds (so the time said is
 * never too early); and named with its zone ("12:35 PM Philippines Time",
 * "12:35 PM Oras sa Pilipinas", "4:35 AM UTC"), so that a customer whose
 * phone is set to another zone is not misled.
 */
export function timeOfDay(epochSeconds: number, country: string | undefined, locale: UiLocale): string {
  const zone = country === undefined ? undefined : timeZoneOfCountry(country);
  const minute = Math.ceil(epochSeconds / 60) * 60;
  const format = new Intl.DateTimeFormat(locale, {
    hour: 'numeric',
    minute: '2-digit',
    timeZone: zone ?? 'UTC',
    timeZoneName: zone ? 'shortGeneric' : 'short',
  });
  return format.format(new Date(minute * 1000));
}
