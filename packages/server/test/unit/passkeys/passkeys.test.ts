import { describe, expect, it } from 'vitest';
import { isPasskeyHeld, passkeyHeldUntil } from '../../../src/core/passkeys/passkeys.js';

const NOW = 1_767_225_600;
const DAY = 86_400;

describe('passkeyHeldUntil (docs/operator-guide.md, "Passkeys")', () => {
  it.each([
    ['a sign-in without a passkey: held for the hold', DAY, null, NOW + DAY],
    ['a sign-in without a passkey, hold 0 (sandbox): not held', 0, null, null],
    ['a sign-in with a passkey out of its hold: not held', DAY, { heldUntil: null }, null],
    ['a sign-in with a passkey whose hold ended just now: not held', DAY, { heldUntil: NOW }, null],
    ['a sign-in with a passkey held one more second: held as one without, the longer of the two', DAY, { heldUntil: NOW + 1 }, NOW + DAY],
    ['a sign-in with a passkey held longer than a new hold: held as long as that one', 60, { heldUntil: NOW + DAY }, NOW + DAY],
    ['hold 0 now, but the signing passkey still held from before: held as long as that one', 0, { heldUntil: NOW + 10 }, NOW + 10],
  ] as const)('%s', (_name, hold, signedInWith, expected) => {
    expect(passkeyHeldUntil(NOW, hold, signedInWith)).toBe(expected);
  });

  it('a second passkey added through a held first one is held as long: the hold cannot be skipped', () => {
    const first = { heldUntil: passkeyHeldUntil(NOW, DAY, null) };
    const second = { heldUntil: passkeyHeldUntil(NOW + 60, DAY, first) };
    expect(isPasskeyHeld(second, NOW + DAY - 1)).toBe(true);
    expect(isPasskeyHeld(second, NOW + 60 + DAY)).toBe(false);
  });
});
