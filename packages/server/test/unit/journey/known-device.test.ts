import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { KNOWN_DEVICE_MAX_CUSTOMERS, KNOWN_DEVICE_TTL_SECONDS, knownDeviceOf, proveKnownDevice, type KnownDeviceCustomer } from '../../../src/core/journey/known-device.js';

const KEY = randomBytes(32);
const T0 = 1_800_000_000;

/** The customer `profileId` at credential version `version`. */
function at(profileId: string, version = 0): KnownDeviceCustomer {
  return { profileId, credentialVersion: version };
}

describe('the known-device cookie (docs/journey.md, "A stranger cannot lock the owner out")', () => {
  it('proves the customer it was given for, until its expiry, under its key only', () => {
    const value = proveKnownDevice(undefined, at('p-1'), T0, KEY);
    const deviceId = knownDeviceOf(value, at('p-1'), T0, KEY);
    expect(deviceId).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(knownDeviceOf(value, at('p-1'), T0 + KNOWN_DEVICE_TTL_SECONDS - 1, KEY)).toBe(deviceId);
    expect(knownDeviceOf(value, at('p-1'), T0 + KNOWN_DEVICE_TTL_SECONDS, KEY)).toBeUndefined();
    expect(knownDeviceOf(value, at('p-2'), T0, KEY)).toBeUndefined();
    expect(knownDeviceOf(value, at('p-1'), T0, randomBytes(32))).toBeUndefined();
    // It names no customer.
    expect(value).not.toContain('p-1');
  });

  it('proves the customer at the credential version it was made at only (docs/journey.md, "After a PIN reset")', () => {
    const before = proveKnownDevice(undefined, at('p-1', 4), T0, KEY);
    const deviceId = knownDeviceOf(before, at('p-1', 4), T0, KEY);
    expect(deviceId).toMatch(/^[A-Za-z0-9_-]{22}$/);
    // The PIN changed, or the customer was locked or unlocked: the proof made before gives nothing.
    expect(knownDeviceOf(before, at('p-1', 5), T0 + 1, KEY)).toBeUndefined();
    expect(knownDeviceOf(before, at('p-1', 3), T0 + 1, KEY)).toBeUndefined();
    // A proof made after it (the browser that reset the PIN) counts, in the same device ID.
    const after = proveKnownDevice(before, at('p-1', 5), T0 + 2, KEY);
    expect(knownDeviceOf(after, at('p-1', 5), T0 + 3, KEY)).toBe(deviceId);
    expect(knownDeviceOf(after, at('p-1', 6), T0 + 3, KEY)).toBeUndefined();
  });

  it('refuses what is not one of its values', () => {
    for (const value of [undefined, '', 'x', '.', `${'a'.repeat(22)}`, `${'a'.repeat(22)}.1~b`, 'a'.repeat(2000)]) {
      expect(knownDeviceOf(value, at('p-1'), T0, KEY)).toBeUndefined();
    }
  });

  it('keeps its device ID, renews a customer, and remembers the newest 5 customers', () => {
    let value = proveKnownDevice(undefined, at('p-0'), T0, KEY);
    const deviceId = knownDeviceOf(value, at('p-0'), T0, KEY);
    for (let i = 1; i <= KNOWN_DEVICE_MAX_CUSTOMERS; i++) value = proveKnownDevice(value, at(`p-${i}`), T0 + i, KEY);
    expect(knownDeviceOf(value, at('p-0'), T0 + 10, KEY)).toBeUndefined();
    for (let i = 1; i <= KNOWN_DEVICE_MAX_CUSTOMERS; i++) expect(knownDeviceOf(value, at(`p-${i}`), T0 + 10, KEY)).toBe(deviceId);
    // Proving p-1 again renews it (one entry), and nothing else is forgotten.
    const renewed = proveKnownDevice(value, at('p-1'), T0 + 100, KEY);
    expect(renewed.split('.')).toHaveLength(1 + KNOWN_DEVICE_MAX_CUSTOMERS);
    expect(knownDeviceOf(renewed, at('p-1'), T0 + 99 + KNOWN_DEVICE_TTL_SECONDS, KEY)).toBe(deviceId);
    expect(knownDeviceOf(renewed, at('p-5'), T0 + 10, KEY)).toBe(deviceId);
  });

  it('a value that is not ours gets a new device ID', () => {
    const value = proveKnownDevice('garbage', at('p-1'), T0, KEY);
    expect(knownDeviceOf(value, at('p-1'), T0, KEY)).toMatch(/^[A-Za-z0-9_-]{22}$/);
  });
});
