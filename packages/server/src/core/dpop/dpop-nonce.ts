import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Clock } from '../clock.js';
import { asSubKeys, type SubKeys } from '../keys/master-keys.js';

/**
 * How long one nonce slot lasts, in seconds. A nonce is accepted in the slot
 * it was issued in and the next one, so for 300 to 600 seconds
 * (docs/resource-servers.md, "DPoP-bound tokens").
 */
export const DPOP_NONCE_SLOT_SECONDS = 300;

/** Issues and checks DPoP server nonces (RFC 9449 §8, §9). */
export interface DpopNonces {
  /** A nonce for the current slot: what `DPoP-Nonce` carries. */
  issue(): string;
  /** Whether `nonce` was issued, by any instance sharing the key, in the current or the previous slot. */
  check(nonce: string): boolean;
}

/**
 * Stateless DPoP nonces: `<slot>.<HMAC-SHA-256(key, slot)>`, where `slot`
 * is the clock's time divided by {@link DPOP_NONCE_SLOT_SECONDS}, and `key`
 * is derived from the master key (`deriveKey(masterKey, 'dpop-nonce')`).
 * Every instance with the same master key issues the same nonce in a slot
 * and accepts one another's, without storing anything
 * (docs/resource-servers.md, "DPoP-bound tokens").
 */
export function createDpopNonces(keys: SubKeys | Uint8Array, clock: Clock): DpopNonces {
  const subKeys = asSubKeys(keys);
  const mac = (key: Uint8Array, slot: number) => createHmac('sha256', key).update(`dpop-nonce ${slot}`).digest();
  const slotAt = () => Math.floor(clock.nowSeconds() / DPOP_NONCE_SLOT_SECONDS);
  return {
    issue() {
      const slot = slotAt();
      return `${slot.toString(36)}.${mac(subKeys.writing, slot).toString('base64url')}`;
    },
    check(nonce) {
      const match = /^([0-9a-z]{1,12})\.([A-Za-z0-9_-]{43})$/.exec(nonce);
      if (!match?.[1] || !match[2]) return false;
      const slot = Number.parseInt(match[1], 36);
      const now = slotAt();
      if (slot !== now && slot !== now - 1) return false;
      const given = Buffer.from(match[2], 'base64url');
      // Every accepted key: while the master key is replaced, a nonce issued before the switch still counts.
      return subKeys.accepted.some(({ key }) => {
        const expected = mac(key, slot);
        return given.length === expected.length && timingSafeEqual(given, expected);
      });
    },
  };
}
