import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { KNOWN_DEVICE_MAX_CUSTOMERS, KNOWN_DEVICE_TTL_SECONDS, knownDeviceOf, proveKnownDevice } from '../../../src/core/journey/known-device.js';

const KEY = randomBytes(32);
const T0 = 1_800_000_000;

describe('the known-device cookie (docs/journey.md, "A stranger cannot lock the owner out")', () => {
  it('proves the customer it was given for, until its expiry, under its key only', () => {
    const value = proveKnownDevice(undefined, 'p-1', T0, KEY);
    const deviceId = knownDeviceOf(value, 'p-1', T0, KEY);
    expect(deviceId).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(knownDeviceOf(value, 'p-1', T0 + KNOWN_DEVICE_TTL_SECONDS - 1, KEY)).toBe(deviceId);
    expect(knownDeviceOf(value, 'p-1', T0 + KNOWN_DEVICE_TTL_SECONDS, KEY)).toBeUndefined();
    expect(knownDeviceOf(value, 'p-2', T0, KEY)).toBeUndefined();
    expect(knownDeviceOf(value, 'p-1', T0, randomBytes(32))).toBeUndefined();
    // It names no customer.
    expect(value).not.toContain('p-1');
  });

  it('refuses what is not one of its values', () => {
    for (const value of [undefined, '', 'x', '.', `${'a'.repeat(22)}`, `${'a'.repeat(22)}.1~b`, 'a'.repeat(2000)]) {
      expect(knownDeviceOf(value, 'p-1', T0, KEY)).toBeUndefined();
    }
  });

  it('keeps its device ID, renews a customer, and remembers the newest 5 customers', () => {
    let value = proveKnownDevice(undefined, 'p-0', T0, KEY);
    const deviceId = knownDeviceOf(value, 'p-0', T0, KEY);
    for (let i = 1; i <= KNOWN_DEVICE_MAX_CUSTOMERS; i++) value = proveKnownDevice(value, `p-${i}`, T0 + i, KEY);
    expect(knownDeviceOf(value, 'p-0', T0 + 10, KEY)).toBeUndefined();
    for (let i = 1; i <= KNOWN_DEVICE_MAX_CUSTOMERS; i++) expect(knownDeviceOf(value, `p-${i}`, T0 + 10, KEY)).toBe(deviceId);
    // Proving p-1 again renews it (one entry), and nothing else is forgotten.
    const renewed = proveKnownDevice(value, 'p-1', T0 + 100, KEY);
    expect(renewed.split('.')).toHaveLength(1 + KNOWN_DEVICE_MAX_CUSTOMERS);
    expect(knownDeviceOf(renewed, 'p-1', T0 + 99 + KNOWN_DEVICE_TTL_SECONDS, KEY)).toBe(deviceId);
    expect(knownDeviceOf(renewed, 'p-5', T0 + 10, KEY)).toBe(deviceId);
  });

  it('a value that is not ours gets a new device ID', () => {
    const value = proveKnownDevice('garbage', 'p-1', T0, KEY);
    expect(knownDeviceOf(value, 'p-1', T0, KEY)).toMatch(/^[A-Za-z0-9_-]{22}$/);
  });
});
