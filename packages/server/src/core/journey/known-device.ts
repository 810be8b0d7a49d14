import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { asSubKeys, type SubKeys } from '../keys/master-keys.js';

/*
 * The known-device cookie (docs/journey.md, "A stranger cannot lock the
 * owner out"): a browser in which a customer completed a sign-in or a PIN
 * reset may later ask for that customer's reset codes from a budget of its
 * own, which no stranger can spend.
 *
 * The value is a random device ID and, for each customer the browser
 * proved (the newest {@link KNOWN_DEVICE_MAX_CUSTOMERS}), an expiry and an
 * HMAC-SHA-256 over the device ID, that expiry, the customer's profile ID
 * and the customer's credential version, under a key derived from the
 * master key. Nothing is stored: a proof is checked by computing its HMAC
 * again for the customer a reset is for, as the reset has just read them.
 * The value names no customer (only the key's holder can tell whose proof
 * an entry is), cannot be forged, and an entry cannot be moved onto another
 * device ID or another customer.
 *
 * The credential version (`Customer.credentialVersion`) changes with the
 * customer's PIN and with `customers lock` / `unlock` (docs/journey.md,
 * "After a PIN reset"): every proof made before such a change stops
 * counting, in every browser that holds one, and the browser in which the
 * PIN was reset gets a new one.
 */

/** Whose proof: the customer's profile ID and credential version as the caller read them. */
export interface KnownDeviceCustomer {
  readonly profileId: string;
  readonly credentialVersion: number;
}

/** A browser stays known to a customer this long after the last sign-in or PIN reset in it. */
export const KNOWN_DEVICE_TTL_SECONDS = 180 * 24 * 60 * 60;
/** Customers one browser is known to at most; proving another forgets the one proved longest ago. */
export const KNOWN_DEVICE_MAX_CUSTOMERS = 5;

const DEVICE_ID = /^[A-Za-z0-9_-]{22}$/;
const ENTRY = /^([0-9]{1,12})~([A-Za-z0-9_-]{43})$/;
/** Longer values are not ours: refused before any HMAC is computed. */
const MAX_VALUE = 22 + KNOWN_DEVICE_MAX_CUSTOMERS * (1 + 12 + 1 + 43);

interface Parsed {
  readonly deviceId: string;
  readonly entries: readonly { readonly expiresAt: number; readonly tag: string }[];
}

function parse(value: string | undefined): Parsed | undefined {
  if (value === undefined || value.length > MAX_VALUE) return undefined;
  const [deviceId, ...rest] = value.split('.');
  if (deviceId === undefined || !DEVICE_ID.test(deviceId) || rest.length > KNOWN_DEVICE_MAX_CUSTOMERS) return undefined;
  const entries = [];
  for (const part of rest) {
    const match = ENTRY.exec(part);
    if (!match) return undefined;
    entries.push({ expiresAt: Number(match[1]), tag: match[2] as string });
  }
  return { deviceId, entries };
}

function tagOf(key: Uint8Array, deviceId: string, expiresAt: number, customer: KnownDeviceCustomer): string {
  const input = `connect known-device v2\n${deviceId}\n${expiresAt}\n${customer.profileId}\n${customer.credentialVersion}`;
  return createHmac('sha256', key).update(input).digest('base64url');
}

/** Whether the entry is a proof under one of the accepted keys (while the master key is replaced, a proof made before the switch still counts). */
function proves(keys: SubKeys, deviceId: string, entry: Parsed['entries'][number], customer: KnownDeviceCustomer): boolean {
  const given = Buffer.from(entry.tag);
  let found = false;
  for (const { key } of keys.accepted) {
    const expected = Buffer.from(tagOf(key, deviceId, entry.expiresAt, customer));
    found = (expected.length === given.length && timingSafeEqual(expected, given)) || found;
  }
  return found;
}

/**
 * The device ID of the browser whose known-device cookie is `value`, when
 * it holds an unexpired proof for `customer` (its profile ID at its
 * credential version) at `now`; `undefined` for anything else (no cookie, a
 * malformed, altered or forged one, one proved for other customers only or
 * before the customer's PIN or status last changed, or expired).
 */
export function knownDeviceOf(value: string | undefined, customer: KnownDeviceCustomer, now: number, keys: SubKeys | Uint8Array): string | undefined {
  const key = asSubKeys(keys);
  const parsed = parse(value);
  if (!parsed) return undefined;
  const found = parsed.entries.some((entry) => entry.expiresAt > now && proves(key, parsed.deviceId, entry, customer));
  return found ? parsed.deviceId : undefined;
}

/**
 * The cookie value after `customer` completed a sign-in or a PIN reset in
 * the browser whose cookie was `value` (its credential version as the
 * sign-in or the reset left it): the same device ID (a new random one when
 * there was none, or it was not one of ours), this customer's proof renewed
 * for {@link KNOWN_DEVICE_TTL_SECONDS} and put first, expired proofs
 * dropped, and at most {@link KNOWN_DEVICE_MAX_CUSTOMERS} kept. (A proof of
 * the same customer at an older version cannot be told from another
 * customer's: it stays until it expires or is pushed out.)
 */
export function proveKnownDevice(value: string | undefined, customer: KnownDeviceCustomer, now: number, keys: SubKeys | Uint8Array): string {
  const key = asSubKeys(keys);
  const parsed = parse(value);
  const deviceId = parsed?.deviceId ?? randomBytes(16).toString('base64url');
  const kept = (parsed?.entries ?? []).filter((entry) => entry.expiresAt > now && !proves(key, deviceId, entry, customer));
  const expiresAt = now + KNOWN_DEVICE_TTL_SECONDS;
  const entries = [{ expiresAt, tag: tagOf(key.writing, deviceId, expiresAt, customer) }, ...kept].slice(0, KNOWN_DEVICE_MAX_CUSTOMERS);
  return [deviceId, ...entries.map((entry) => `${entry.expiresAt}~${entry.tag}`)].join('.');
}
