import { randomBytes, randomUUID } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { fixedClock } from '../../../src/core/clock.js';
import { runIdempotently, type IdempotencyDeps, type PreparedWork } from '../../../src/core/customer-tokens/idempotent-refresh.js';
import { InvalidGrant, InvalidRequest } from '../../../src/core/errors.js';
import { unseal } from '../../../src/core/keys/master-key.js';
import { memoryStorage, T0 } from '../otp/otp-fixtures.js';
import { rejectionOf } from '../tokens/token-fixtures.js';
import { IDEMPOTENCY_CLAIM_SECONDS, IDEMPOTENCY_WINDOW_SECONDS } from '../../../src/core/lifetimes.js';

const RESPONSE = { accessToken: 'eyJ.access.token.in.clear', refreshToken: 'eyJ.refresh.token', expiresAt: T0 + 3600 };

async function setup() {
  const storage = await memoryStorage();
  const clock = fixedClock(T0);
  const deps: IdempotencyDeps = { idempotentRequests: storage.idempotentRequests, sealKey: randomBytes(32), clock };
  const reference = randomUUID();
  const request = { clientId: 'cid_sandbox_acme', reference, body: '{"refreshToken":"r1"}' };
  /** The stored record of a request, read through the store's claim (which returns what is there; call it only when there is one). */
  const stored = (clientId = request.clientId, ref = reference) =>
    storage.idempotentRequests.claimIdempotentRequest({
      clientId,
      reference: ref,
      requestHash: 'probe',
      sealedResponse: null,
      createdAt: clock.nowSeconds(),
      expiresAt: clock.nowSeconds() + 1,
    });
  return { storage, clock, deps, request, reference, stored };
}

/** Work whose response is `response` and whose `apply` is a spy (failing with `failure` when given). */
function work<T>(response: T, failure?: unknown): { prepare: () => Promise<PreparedWork<T>>; apply: ReturnType<typeof vi.fn> } {
  const apply = vi.fn(async () => {
    if (failure !== undefined) throw failure;
  });
  return { prepare: async () => ({ response, apply }), apply };
}

describe('runIdempotently', () => {
  it('does the work once and remembers its response, sealed', async () => {
    const { deps, request, stored } = await setup();
    const w = work(RESPONSE);
    expect(await runIdempotently(request, w.prepare, deps)).toEqual({ response: RESPONSE, replayed: false });
    expect(w.apply).toHaveBeenCalledTimes(1);

    const record = await stored();
    expect(record).toMatchObject({ clientId: request.clientId, reference: request.reference, createdAt: T0, expiresAt: T0 + IDEMPOTENCY_WINDOW_SECONDS });
    const sealed = record?.sealedResponse ?? '';
    expect(sealed.split('.')).toHaveLength(5);
    for (const secret of ['access.token.in.clear', 'refresh.token', 'accessToken']) expect(sealed).not.toContain(secret);
    expect(JSON.parse(await unseal(deps.sealKey as Uint8Array, `tokens:${request.clientId}:${request.reference}`, sealed))).toEqual(RESPONSE);
    await expect(unseal(deps.sealKey as Uint8Array, `tokens:${request.clientId}:${randomUUID()}`, sealed)).rejects.toThrow();
    await expect(unseal(randomBytes(32), `tokens:${request.clientId}:${request.reference}`, sealed)).rejects.toThrow();
  });

  it('the window is 24 hours', () => {
    expect(IDEMPOTENCY_WINDOW_SECONDS).toBe(86_400);
  });

  it('the response is stored before the work is done: a retry meanwhile is re-checked, told the first may still run', async () => {
    const { deps, request } = await setup();
    let atApply: unknown;
    const recheck = vi.fn(async () => {});
    const first = await runIdempotently(
      request,
      async () => ({
        response: RESPONSE,
        apply: async () => {
          // A retry while the first request is doing its work.
          atApply = await runIdempotently(request, work({ ...RESPONSE, accessToken: 'another' }).prepare, deps, recheck);
        },
      }),
      deps,
    );
    expect(first).toEqual({ response: RESPONSE, replayed: false });
    expect(atApply).toEqual({ response: RESPONSE, replayed: true });
    expect(recheck).toHaveBeenCalledWith(RESPONSE, true);
  });

  it('a retry is told the first may still run for 60 s after it began, not after', async () => {
    const { deps, request, clock } = await setup();
    await runIdempotently(request, work(RESPONSE).prepare, deps);
    const recheck = vi.fn(async () => {});
    clock.set(T0 + IDEMPOTENCY_CLAIM_SECONDS - 1);
    await runIdempotently(request, work(RESPONSE).prepare, deps, recheck);
    clock.set(T0 + IDEMPOTENCY_CLAIM_SECONDS);
    await runIdempotently(request, work(RESPONSE).prepare, deps, recheck);
    expect(recheck.mock.calls).toEqual([
      [RESPONSE, true],
      [RESPONSE, false],
    ]);
  });

  it('a claim without a response (stored by an earlier version) is 409 until it expires, then runs afresh', async () => {
    const { deps, request, clock, storage } = await setup();
    await storage.idempotentRequests.claimIdempotentRequest({
      clientId: request.clientId,
      reference: request.reference,
      requestHash: 'whatever',
      sealedResponse: null,
      createdAt: T0,
      expiresAt: T0 + IDEMPOTENCY_CLAIM_SECONDS,
    });
    const w = work(RESPONSE);
    clock.set(T0 + IDEMPOTENCY_CLAIM_SECONDS - 1);
    await expect(runIdempotently(request, w.prepare, deps)).rejects.toMatchObject({ status: 409 });
    clock.set(T0 + IDEMPOTENCY_CLAIM_SECONDS);
    expect(await runIdempotently(request, w.prepare, deps)).toEqual({ response: RESPONSE, replayed: false });
    expect(w.apply).toHaveBeenCalledTimes(1);
    // Done, it is kept for the whole window from then on.
    clock.advance(IDEMPOTENCY_WINDOW_SECONDS - 1);
    expect(await runIdempotently(request, w.prepare, deps)).toEqual({ response: RESPONSE, replayed: true });
  });

  it('a replay is re-checked first: when the check refuses, the stored response is not handed out, and stays stored', async () => {
    const { deps, request } = await setup();
    await runIdempotently(request, work(RESPONSE).prepare, deps);
    const refused = new InvalidGrant('no longer valid');
    const recheck = vi.fn(async () => Promise.reject(refused));
    const w = work(RESPONSE);
    expect(await rejectionOf(runIdempotently(request, w.prepare, deps, recheck))).toBe(refused);
    expect(recheck).toHaveBeenCalledWith(RESPONSE, true);
    expect(w.apply).not.toHaveBeenCalled();
    expect(await runIdempotently(request, w.prepare, deps, async () => {})).toEqual({ response: RESPONSE, replayed: true });
  });

  it('replays the same request within 24 h without doing the work', async () => {
    const { deps, request, clock } = await setup();
    await runIdempotently(request, work(RESPONSE).prepare, deps);
    const w = work({ ...RESPONSE, accessToken: 'another' });
    for (const at of [T0, T0 + 1, T0 + 86_399]) {
      clock.set(at);
      expect(await runIdempotently(request, w.prepare, deps)).toEqual({ response: RESPONSE, replayed: true });
    }
    expect(w.apply).not.toHaveBeenCalled();
  });

  it('runs again once 24 h have passed, and remembers the new response', async () => {
    const { deps, request, clock } = await setup();
    await runIdempotently(request, work(RESPONSE).prepare, deps);
    clock.set(T0 + 86_400);
    const later = { ...RESPONSE, accessToken: 'later' };
    expect(await runIdempotently(request, work(later).prepare, deps)).toEqual({ response: later, replayed: false });
    clock.set(T0 + 86_400 + 86_399);
    expect(await runIdempotently(request, work(RESPONSE).prepare, deps)).toEqual({ response: later, replayed: true });
  });

  it('the same reference with another body → 409 invalid_request; the work is not done', async () => {
    const { deps, request } = await setup();
    await runIdempotently(request, work(RESPONSE).prepare, deps);
    const w = work(RESPONSE);
    const error = await rejectionOf(runIdempotently({ ...request, body: '{"refreshToken":"r2"}' }, w.prepare, deps));
    expect(error).toBeInstanceOf(InvalidRequest);
    expect(error).toMatchObject({ status: 409, error: 'invalid_request', description: 'this Request-Reference-No was already used for a different request' });
    expect(w.apply).not.toHaveBeenCalled();
  });

  it('concurrent calls: the work is done once; every other call replays it', async () => {
    const { deps, request } = await setup();
    const w = work(RESPONSE);
    const results = await Promise.allSettled(Array.from({ length: 8 }, () => runIdempotently(request, w.prepare, deps)));
    expect(w.apply).toHaveBeenCalledTimes(1);
    const fulfilled = results.map((r) => (r.status === 'fulfilled' ? r.value : r.reason) as { response: unknown; replayed: boolean });
    expect(fulfilled.filter((v) => v.replayed === false)).toHaveLength(1);
    for (const value of fulfilled) expect(value.response).toEqual(RESPONSE);
  });

  it('a failure is not remembered: it is rethrown, and the reference can be retried, with any body', async () => {
    const { deps, request, stored } = await setup();
    const refused = new InvalidGrant('refresh token is invalid or expired');
    expect(await rejectionOf(runIdempotently(request, async () => Promise.reject(refused), deps))).toBe(refused);
    const crash = new Error('database down');
    expect(await rejectionOf(runIdempotently(request, work(RESPONSE, crash).prepare, deps))).toBe(crash);
    expect(await runIdempotently({ ...request, body: '{"refreshToken":"r2"}' }, work(RESPONSE).prepare, deps)).toEqual({ response: RESPONSE, replayed: false });
    expect((await stored())?.sealedResponse).not.toBeNull();
  });

  it('another client with the same reference is a request of its own', async () => {
    const { deps, request } = await setup();
    await runIdempotently(request, work(RESPONSE).prepare, deps);
    const theirs = { ...RESPONSE, accessToken: 'theirs' };
    expect(await runIdempotently({ ...request, clientId: 'cid_sandbox_other' }, work(theirs).prepare, deps)).toEqual({ response: theirs, replayed: false });
    expect(await runIdempotently(request, work(theirs).prepare, deps)).toEqual({ response: RESPONSE, replayed: true });
  });

  it('a different reference of the same client is a request of its own', async () => {
    const { deps, request } = await setup();
    await runIdempotently(request, work(RESPONSE).prepare, deps);
    const w = work(RESPONSE);
    await runIdempotently({ ...request, reference: randomUUID() }, w.prepare, deps);
    expect(w.apply).toHaveBeenCalledTimes(1);
  });
});
