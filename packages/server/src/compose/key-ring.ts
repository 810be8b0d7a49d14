import type { ChangeFeed } from '../core/changes/change-feed.js';
import type { Clock } from '../core/clock.js';
import { KeyRing } from '../core/keys/key-ring.js';
import type { SigningKeyStore } from '../core/keys/signing-key-store.js';
import type { SubKeys } from '../core/keys/master-keys.js';

/** What {@link openKeyRing} reads the keys from and listens to. */
export interface KeyRingWiring {
  readonly keys: SigningKeyStore;
  /** `Runtime.sealKey`: unseals the private keys. */
  readonly sealKey: SubKeys | Uint8Array;
  readonly clock: Clock;
  readonly changes: ChangeFeed;
  /** Told when reading the keys again failed (it is tried again a second later). */
  readonly onReloadFailure?: (error: unknown) => void;
}

/** A key ring kept up to date by the change signal. */
export interface ListeningKeyRing {
  readonly keyRing: KeyRing;
  /** Stops listening and closes the key ring. */
  close(): void;
}

/**
 * Opens the key ring and reads the keys again whenever the change signal
 * says they changed elsewhere (a rotation, a revocation) or that changes may
 * have been missed: the wiring the server and a resource server share.
 */
export async function openKeyRing(wiring: KeyRingWiring): Promise<ListeningKeyRing> {
  const { keys, sealKey, clock, changes, onReloadFailure } = wiring;
  const keyRing = await KeyRing.open({ keys, sealKey, clock, changes });
  const stopReloads = changes.onChange((heard) => {
    if (heard === 'all' || heard.kind === 'keys') keyRing.keysChanged(onReloadFailure);
  });
  return {
    keyRing,
    close() {
      stopReloads();
      keyRing.close();
    },
  };
}
