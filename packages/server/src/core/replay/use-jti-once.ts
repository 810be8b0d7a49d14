import { createHash } from 'node:crypto';
import type { ReplayKind, ReplayStore } from './replay-store.js';

/**
 * Whether this is the first use of `jti` by `issuer` (a client ID for a
 * client assertion, a key thumbprint for a DPoP proof) before `expiresAt`.
 * Neither is stored as given: the store keeps the SHA-256 of both, so the
 * table holds no client's identifiers and its keys have one length.
 */
export function useJtiOnce(
  store: Pick<ReplayStore, 'useJtiOnce'>,
  use: { kind: ReplayKind; issuer: string; jti: string; expiresAt: number; now: number },
): Promise<boolean> {
  const hash = createHash('sha256').update(use.issuer).update('\0').update(use.jti).digest('base64url');
  return store.useJtiOnce(use.kind, hash, use.expiresAt, use.now);
}
