import { createHash } from 'node:crypto';
import type { Clock } from '../clock.js';
import { InvalidRequest } from '../errors.js';
import { seal, unseal } from '../keys/master-key.js';
import type { IdempotentRequestStore } from './idempotent-request-store.js';
import { IDEMPOTENCY_CLAIM_SECONDS, IDEMPOTENCY_WINDOW_SECONDS } from '../lifetimes.js';

/** What idempotent retries need. */
export interface IdempotencyDeps {
  readonly idempotentRequests: IdempotentRequestStore;
  /** Seals stored responses: they hold live tokens. */
  readonly sealKey: Uint8Array;
  readonly clock: Clock;
}

/**
 * Runs `work` once per client and `Request-Reference-No` within 24 hours.
 *
 * A retry with the same reference and the same body gets the first response
 * again instead of running twice, so a consumer that lost a response does
 * not invalidate the token it never saw. The same reference with another
 * body, or while the first request still runs, is a conflict (409). Only
 * successes are remembered: after a failure the reference can be retried.
 * Stored responses are sealed (AES-GCM under a key from the master key).
 *
 * `recheck` runs before a stored response is replayed and throws to refuse
 * it, so that a replay never hands out what has been revoked since.
 */
export async function runIdempotently<T>(
  request: { clientId: string; reference: string; body: string },
  work: () => Promise<T>,
  deps: IdempotencyDeps,
  recheck: (stored: T) => Promise<void> = async () => {},
): Promise<{ response: T; replayed: boolean }> {
  const now = deps.clock.nowSeconds();
  const requestHash = createHash('sha256').update(request.body).digest('base64url');
  const label = `tokens:${request.clientId}:${request.reference}`;
  const existing = await deps.idempotentRequests.claimIdempotentRequest({
    clientId: request.clientId,
    reference: request.reference,
    requestHash,
    sealedResponse: null,
    createdAt: now,
    expiresAt: now + IDEMPOTENCY_CLAIM_SECONDS,
  });
  if (existing) {
    if (existing.requestHash !== requestHash) {
      throw new InvalidRequest('this Request-Reference-No was already used for a different request', { status: 409 });
    }
    if (existing.sealedResponse === null) {
      throw new InvalidRequest('a request with this Request-Reference-No is still being processed', { status: 409 });
    }
    const stored = JSON.parse(await unseal(deps.sealKey, label, existing.sealedResponse)) as T;
    await recheck(stored);
    return { response: stored, replayed: true };
  }
  let response: T;
  try {
    response = await work();
  } catch (error) {
    await deps.idempotentRequests.releaseIdempotentRequest(request.clientId, request.reference);
    throw error;
  }
  await deps.idempotentRequests.completeIdempotentRequest(
    request.clientId,
    request.reference,
    await seal(deps.sealKey, label, JSON.stringify(response)),
    now + IDEMPOTENCY_WINDOW_SECONDS,
  );
  return { response, replayed: false };
}
