import { hashPin, scryptOnThreadPool } from '../../src/core/customers/pin.js';

/**
 * The scrypt cost of the PIN hashes tests set up customers with: 1/32 of
 * Connect's own (`PIN_HASH_COST`), about 4 ms instead of 120. A stored hash
 * names its cost, and Connect verifies every hash at the cost it names, so
 * these customers log in through exactly the code a customer with a
 * production hash does, without each wrong or right PIN costing a test
 * 120 ms of CPU (about a quarter of the suite's CPU time when it did).
 * Tests of hashing itself, of the PIN-check queue and of what a PIN check
 * costs hash with Connect's own cost.
 */
export const TEST_PIN_HASH_COST = { N: 1024, r: 8, p: 1 } as const;

const pinHashes = new Map<string, Promise<string>>();

/**
 * A scrypt hash of `pin` at {@link TEST_PIN_HASH_COST}, computed once per
 * test file. A hash carries its own salt and cost, so customers sharing it
 * verify exactly as with their own.
 */
export function cachedPinHash(pin: string): Promise<string> {
  let hash = pinHashes.get(pin);
  if (!hash) {
    hash = hashPin(pin, scryptOnThreadPool, TEST_PIN_HASH_COST);
    pinHashes.set(pin, hash);
  }
  return hash;
}
