import { timingSafeEqual } from 'node:crypto';
import type { Clock } from '../clock.js';
import { SECRET_MEMORY_SECONDS } from '../lifetimes.js';

/** Checks a presented client secret against its stored HMAC. */
export interface ClientSecretVerifier {
  /** Whether `secret` matches `storedHash`, in constant time. */
  verify(secret: string, storedHash: string): boolean;
}

const MAX_ENTRIES = 10_000;

/**
 * Wraps a client-secret verifier so that a secret that verified is recognised
 * again for the next `ttlSeconds` (5 s) by a
 * constant-time comparison with it, instead of a new HMAC.
 *
 * Under load the HMAC is dear: on the benchmark machine, with the signing
 * threads busy on the same core, it cost about 8% of a token request
 * (bench/README.md), and a client that asks for tokens often presents the
 * same secret again and again.
 *
 * What it keeps and for how long: the secrets that verified, in memory only,
 * keyed by the stored hash they verified against; each entry ends
 * `ttlSeconds` after its HMAC verification (using it again does not extend
 * it) and is wiped and dropped at the next verification after that, or when
 * 10,000 newer ones push it out. The process already holds the signing keys
 * and the HMAC key in memory, so these few seconds of secrets add little for
 * anyone who can read it.
 *
 * What it never changes:
 * - a secret that does not match is checked with the HMAC as before, so a
 *   failure costs what it did, and nothing that failed is remembered;
 * - an entry is keyed by the stored hash, so after `rotate-secret` (a new
 *   hash) an old secret is checked against the new hash by the HMAC; the
 *   grace period, status and environment checks are the caller's, as before.
 */
export function rememberVerifiedSecrets(
  verifier: ClientSecretVerifier,
  clock: Clock,
  ttlSeconds = SECRET_MEMORY_SECONDS,
  maxEntries = MAX_ENTRIES,
): ClientSecretVerifier & { forget(): void } {
  // In order of expiry: entries are only ever added at the end, with the latest expiry.
  const remembered = new Map<string, { secret: Buffer; until: number }>();
  // When the oldest entry ends: before then there is nothing to sweep, and no iterator is made.
  let firstUntil = Number.POSITIVE_INFINITY;

  const drop = (storedHash: string, entry: { secret: Buffer }) => {
    entry.secret.fill(0);
    remembered.delete(storedHash);
    firstUntil = remembered.size === 0 ? Number.POSITIVE_INFINITY : (remembered.values().next().value as { until: number }).until;
  };

  return {
    /** Drops every remembered secret (the accepted master keys changed). */
    forget() {
      for (const [hash, entry] of remembered) drop(hash, entry);
    },
    verify(secret, storedHash) {
      const now = clock.nowSeconds();
      if (firstUntil <= now) {
        for (const [hash, entry] of remembered) {
          if (entry.until > now) break;
          drop(hash, entry);
        }
      }
      const entry = remembered.get(storedHash);
      // Checked here too: the sweep above relies on the clock only moving forward.
      if (entry && entry.until > now) {
        const presented = Buffer.from(secret, 'utf8');
        if (presented.length === entry.secret.length && timingSafeEqual(presented, entry.secret)) return true;
      }
      if (!verifier.verify(secret, storedHash)) return false;
      if (entry) drop(storedHash, entry);
      if (remembered.size >= maxEntries) {
        const [oldestHash, oldest] = remembered.entries().next().value as [string, { secret: Buffer }];
        drop(oldestHash, oldest);
      }
      remembered.set(storedHash, { secret: Buffer.from(secret, 'utf8'), until: now + ttlSeconds });
      if (remembered.size === 1) firstUntil = now + ttlSeconds;
      return true;
    },
  };
}
