/**
 * Why a PIN a customer is choosing is too easy to guess (docs/journey.md,
 * "Registration"):
 * - `repeated`: one digit, or a group of two or three digits, repeated to
 *   fill the PIN (`0000`, `111111`, `1212`, `696969`, `123123`);
 * - `sequence`: every digit one more, or every digit one less, than the one
 *   before, going round from 9 to 0 (`1234`, `4321`, `987654`, `7890`, `8901`);
 * - `common`: one of the PINs people choose most often ({@link COMMON_PINS}).
 */
export type WeakPinReason = 'repeated' | 'sequence' | 'common';

/**
 * The PINs people choose most often that the `repeated` and `sequence`
 * rules do not already catch: dates and years, keypad columns and
 * diagonals, digits that spell or mean a word, and mirrored pairs.
 */
export const COMMON_PINS: ReadonlySet<string> = new Set([
  // 4 digits
  '1004', '2000', '2001', '2002', '1122', '1221', '2112', '1001', '1100', '1998', '1999',
  '2580', '0852', '1470', '0741', '3690', '0963', '1357', '2468', '1379', '1397', '5683', '0007',
  '1590', '7531', '8642', '1369',
  // 6 digits
  '112233', '111222', '121314', '123321', '102030', '147258', '159753', '147852', '159357', '258369',
  '963852', '741852', '789456', '456123', '321654', '123654', '112211', '332211', '998877', '778899',
  '520131', '147369', '100200',
]);

/**
 * Why `pin` (already 4 to 6 digits) is too easy to guess, or `undefined`
 * when it is not. Applies only when a PIN is chosen (registration,
 * `customers create`), never when one is checked: a customer whose PIN
 * predates these rules still logs in with it.
 *
 * @example
 * weakPinReason('1111'); // 'repeated'
 * weakPinReason('4321'); // 'sequence'
 * weakPinReason('2580'); // 'common'
 * weakPinReason('4829'); // undefined
 */
export function weakPinReason(pin: string): WeakPinReason | undefined {
  if (isRepeated(pin)) return 'repeated';
  if (isSequence(pin, 1) || isSequence(pin, -1)) return 'sequence';
  if (COMMON_PINS.has(pin)) return 'common';
  return undefined;
}

/** A group of 1 to 3 digits, repeated at least twice to fill the PIN. */
function isRepeated(pin: string): boolean {
  for (let size = 1; size <= 3 && size * 2 <= pin.length; size++) {
    if (pin.length % size === 0 && pin.slice(0, size).repeat(pin.length / size) === pin) return true;
  }
  return false;
}

/** Each digit `step` from the one before, 9 and 0 being neighbours. */
function isSequence(pin: string, step: 1 | -1): boolean {
  for (let i = 1; i < pin.length; i++) {
    if ((Number(pin[i - 1]) + step + 10) % 10 !== Number(pin[i])) return false;
  }
  return true;
}
