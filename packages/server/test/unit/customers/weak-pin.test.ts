import { describe, expect, it } from 'vitest';
import { COMMON_PINS, weakPinReason, type WeakPinReason } from '../../../src/core/customers/weak-pin.js';

describe('weak PINs (docs/journey.md, "Registration")', () => {
  it.each<[string, WeakPinReason | undefined]>([
    // One digit repeated, at every length.
    ['0000', 'repeated'],
    ['11111', 'repeated'],
    ['111111', 'repeated'],
    ['999999', 'repeated'],
    // A pair or a triple repeated to fill the PIN.
    ['1212', 'repeated'],
    ['6969', 'repeated'],
    ['1010', 'repeated'],
    ['121212', 'repeated'],
    ['696969', 'repeated'],
    ['123123', 'repeated'],
    ['482482', 'repeated'],
    // Up or down by one, at every length, 9 and 0 neighbours.
    ['1234', 'sequence'],
    ['0123', 'sequence'],
    ['12345', 'sequence'],
    ['123456', 'sequence'],
    ['456789', 'sequence'],
    ['4321', 'sequence'],
    ['9876', 'sequence'],
    ['987654', 'sequence'],
    ['654321', 'sequence'],
    ['7890', 'sequence'],
    ['8901', 'sequence'],
    ['890123', 'sequence'],
    ['0987', 'sequence'],
    ['1098', 'sequence'],
    ['210987', 'sequence'],
    // The short list of common ones.
    ['2580', 'common'],
    ['0852', 'common'],
    ['1004', 'common'],
    ['2000', 'common'],
    ['2001', 'common'],
    ['1122', 'common'],
    ['5683', 'common'],
    ['0007', 'common'],
    ['112233', 'common'],
    ['147258', 'common'],
    ['159753', 'common'],
    ['111222', 'common'],
    // Near misses are fine.
    ['1235', undefined],
    ['1243', undefined],
    ['12346', undefined],
    ['2123', undefined],
    ['12121', undefined],
    ['121213', undefined],
    ['123124', undefined],
    ['135791', undefined],
    ['4829', undefined],
    ['482613', undefined],
    ['0042', undefined],
    ['3817', undefined],
    ['258025', undefined],
  ])('%s: %s', (pin, reason) => {
    expect(weakPinReason(pin)).toBe(reason);
  });

  it('lists only 4- and 6-digit PINs the other rules do not catch', () => {
    for (const pin of COMMON_PINS) {
      expect(pin, pin).toMatch(/^(\d{4}|\d{6})$/);
      expect(weakPinReason(pin), pin).toBe('common');
    }
  });

  it('refuses few PINs: about 1.5 in 100 of 4 digits, about 1 in 1000 of 6', () => {
    const weak = (length: number) => {
      let count = 0;
      for (let n = 0; n < 10 ** length; n++) if (weakPinReason(String(n).padStart(length, '0'))) count++;
      return count;
    };
    const common = (length: number) => [...COMMON_PINS].filter((p) => p.length === length).length;
    // Repeated: 10 single digits and 90 other pairs; 10 runs up and 10 down; the common ones.
    expect(weak(4)).toBe(100 + 20 + common(4));
    // Repeated: 10 single digits, 90 other pairs, 990 other triples.
    expect(weak(6)).toBe(1090 + 20 + common(6));
  });
});
