import { createHash } from 'node:crypto';
import type { Clock } from '../clock.js';
import { InvalidRequest } from '../errors.js';
import { seal } from '../keys/master-key.js';
import { asSubKeys, unsealAccepted, type SubKeys } from '../keys/master-keys.js';
import { idempotentResponseLabel } from '../keys/sealed-labels.js';
import type { IdempotentRequestStore } from './idempotent-request-store.js';
import { IDEMPOTENCY_CLAIM_SECONDS, IDEMPOTENCY_WINDOW_SECONDS } from '../lifetimes.js';

/** What idempotent retries need. */
export interface IdempotencyDeps {
  readonly idempotentRequests: IdempotentRequestStore;
  /** Seals stored responses: they hold live tokens. */
  readonly sealKey: SubKeys | Uint8Array;
  readonly clock: Clock;
}

/** The answer to a retry while the first request with its `Request-Reference-No` may still run (409). */
export const STILL_RUNNING = 'a request with this Request-Reference-No is still being processed';

/**
 * The work of an idempotent request, ready but not yet done: its response
 * is known, `apply()` does it. `apply()` may answer otherwise than
 * prepared (a refresh within its reuse interval gives the token another
 * refresh minted): it returns that response, which is then stored instead.
 */
export interface PreparedWork<T> {
  readonly response: T;
  apply(): Promise<T | void>;
}

/**
 * Runs a request once per client and `Request-Reference-No` within 24 hours.
 *
 * A retry with the same reference and the same body gets the first response
 * again instead of running twice, so a consumer that lost a response does
 * not invalidate the token it never saw. The same reference with another
 * body is a conflict (409). Only successes are remembered: after a failure
 * the reference can be retried. Stored responses are sealed (AES-GCM under
 * a key from the master key).
 *
 * One statement besides the work's own (docs/operator-guide.md, "Database
 * round trips"): `prepare` makes the response without touching the
 * database (it mints the tokens), the reference is claimed with the sealed
 * response already in it, and only then does `apply` do the work (one more
 * statement when `apply` answers otherwise than prepared: the stored
 * response is replaced). A failure of `apply` releases the reference. A retry that finds the
 * reference claimed hands the stored response out only after `recheck`
 * passes; `recheck` is told whether the first request may still be
 * running (it began less than `IDEMPOTENCY_CLAIM_SECONDS` ago), and
 * throws to refuse (409 while it runs, otherwise an error of its own), so
 * that a replay never hands out what is not, or no longer, in force.
 */
export async function runIdempotently<T>(
  request: { clientId: string; reference: string; body: string },
  prepare: () => Promise<PreparedWork<T>>,
  deps: IdempotencyDeps,
  recheck: (stored: T, firstMayRun: boolean) => Promise<void> = async () => {},
): Promise<{ response: T; replayed: boolean }> {
  const now = deps.clock.nowSeconds();
  const requestHash = createHash('sha256').update(request.body).digest('base64url');
  const label = idempotentResponseLabel(request.clientId, request.reference);
  let prepared: PreparedWork<T>;
  try {
    prepared = await prepare();
  } catch (error) {
    // Refused before anything was done; still, a reference in use for another request is a conflict first.
    const existing = await deps.idempotentRequests.findIdempotentRequest(request.clientId, request.reference, now);
    if (existing && existing.requestHash !== requestHash) throw differentRequest();
    throw error;
  }
  const claim = {
    clientId: request.clientId,
    reference: request.reference,
    requestHash,
    sealedResponse: await seal(asSubKeys(deps.sealKey).writing, label, JSON.stringify(prepared.response)),
    createdAt: now,
    expiresAt: now + IDEMPOTENCY_WINDOW_SECONDS,
  };
  const existing = await deps.idempotentRequests.claimIdempotentRequest(claim);
  if (existing) {
    if (existing.requestHash !== requestHash) throw differentRequest();
    // A claim without a response (stored by an earlier version): running until it expires.
    if (existing.sealedResponse === null) throw new InvalidRequest(STILL_RUNNING, { status: 409 });
    const stored = JSON.parse(await unsealAccepted(deps.sealKey, label, existing.sealedResponse)) as T;
    await recheck(stored, existing.createdAt + IDEMPOTENCY_CLAIM_SECONDS > now);
    return { response: stored, replayed: true };
  }
  let applied: T | void;
  try {
    applied = await prepared.apply();
  } catch (error) {
    await deps.idempotentRequests.releaseIdempotentRequest(claim);
    throw error;
  }
  if (applied === undefined || applied === prepared.response) return { response: prepared.response, replayed: false };
  // The work answered otherwise than prepared: a retry must get what this request got. Until this
  // statement the stored answer is one whose token never became the session's, which a retry's
  // `recheck` refuses (409 while the first request may run).
  await deps.idempotentRequests.replaceIdempotentResponse(claim, await seal(asSubKeys(deps.sealKey).writing, label, JSON.stringify(applied)));
  return { response: applied, replayed: false };
}

function differentRequest(): InvalidRequest {
  return new InvalidRequest('this Request-Reference-No was already used for a different request', { status: 409 });
}
