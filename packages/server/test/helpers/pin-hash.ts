import { hashPin } from '../../src/core/customers/pin.js';

const pinHashes = new Map<string, Promise<string>>();

/**
 * scrypt of `pin`, computed once per test file. A hash carries its own salt
 * and cost, so customers sharing it verify exactly as with their own, and a
 * test need not wait about 100 ms for each customer it sets up.
 */
export function cachedPinHash(pin: string): Promise<string> {
  let hash = pinHashes.get(pin);
  if (!hash) {
    hash = hashPin(pin);
    pinHashes.set(pin, hash);
  }
  return hash;
}
