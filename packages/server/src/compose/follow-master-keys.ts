import type { ChangeFeed } from '../core/changes/change-feed.js';
import type { MasterKeyStore } from '../core/keys/master-key-store.js';
import type { MasterKeys } from '../core/keys/master-keys.js';

/**
 * Reads the master keys' records again whenever the change signal says the
 * keys changed (a `master-key rotate` or `retire`, on any instance or
 * command) or that changes may have been missed, so every instance writes
 * under the new key, or stops accepting a retired one, within a second
 * (docs/operator-guide.md, "Replacing the master key"). A failed read is
 * tried again a second later. Returns how to stop.
 */
export function followMasterKeys(
  store: Pick<MasterKeyStore, 'listMasterKeys'>,
  masterKeys: MasterKeys,
  changes: ChangeFeed,
  onError: (error: unknown) => void = () => {},
): () => void {
  let retry: ReturnType<typeof setTimeout> | undefined;
  let stopped = false;
  // One read after another: a slower, older read never applies its records after a newer one.
  let reading: Promise<void> = Promise.resolve();
  const read = (): void => {
    reading = reading
      .then(() => store.listMasterKeys())
      .then((records) => masterKeys.apply(records))
      .catch((error: unknown) => {
        onError(error);
        if (stopped || retry) return;
        retry = setTimeout(() => {
          retry = undefined;
          read();
        }, 1000);
        retry.unref?.();
      });
  };
  const stop = changes.onChange((heard) => {
    if (heard === 'all' || heard.kind === 'keys') read();
  });
  return () => {
    stopped = true;
    stop();
    if (retry) clearTimeout(retry);
  };
}
