import { randomBytes, randomUUID } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { fixedClock } from '../../../src/core/clock.js';
import { runIdempotently, type IdempotencyDeps } from '../../../src/core/customer-tokens/idempotent-refresh.js';
import { InvalidGrant, InvalidRequest } from '../../../src/core/errors.js';
import { unseal } from '../../../src/core/keys/master-key.js';
import { memoryStorage, T0 } from '../login/otp-fixtures.js';
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

function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe('runIdempotently', () => {
  it('runs the work once and remembers its response, sealed', async () => {
    const { deps, request, stored } = await setup();
    const work = vi.fn(async () => RESPONSE);
    expect(await runIdempotently(request, work, deps)).toEqual({ response: RESPONSE, replayed: false });
    expect(work).toHaveBeenCalledTimes(1);

    const record = await stored();
    expect(record).toMatchObject({ clientId: request.clientId, reference: request.reference, createdAt: T0, expiresAt: T0 + IDEMPOTENCY_WINDOW_SECONDS });
    const sealed = record?.sealedResponse ?? '';
    expect(sealed.split('.')).toHaveLength(5);
    for (const secret of ['access.token.in.clear', 'refresh.token', 'accessToken']) expect(sealed).not.toContain(secret);
    expect(JSON.parse(await unseal(deps.sealKey, `tokens:${request.clientId}:${request.reference}`, sealed))).toEqual(RESPONSE);
    await expect(unseal(deps.sealKey, `tokens:${request.clientId}:${randomUUID()}`, sealed)).rejects.toThrow();
    await expect(unseal(randomBytes(32), `tokens:${request.clientId}:${request.reference}`, sealed)).rejects.toThrow();
  });

  it('the window is 24 hours', () => {
    expect(IDEMPOTENCY_WINDOW_SECONDS).toBe(86_400);
  });

  it('a claim left by a request that never finished runs afresh after 60 s, not 409 for a day', async () => {
    const { deps, request, clock, storage } = await setup();
    // A request claimed the reference and its process died before completing.
    await storage.idempotentRequests.claimIdempotentRequest({
      clientId: request.clientId,
      reference: request.reference,
      requestHash: 'whatever',
      sealedResponse: null,
      createdAt: T0,
      expiresAt: T0 + IDEMPOTENCY_CLAIM_SECONDS,
    });
    const work = vi.fn(async () => RESPONSE);
    clock.set(T0 + IDEMPOTENCY_CLAIM_SECONDS - 1);
    await expect(runIdempotently(request, work, deps)).rejects.toMatchObject({ status: 409 });
    clock.set(T0 + IDEMPOTENCY_CLAIM_SECONDS);
    expect(await runIdempotently(request, work, deps)).toEqual({ response: RESPONSE, replayed: false });
    expect(work).toHaveBeenCalledTimes(1);
    // Completed, it is kept for the whole window from then on.
    clock.advance(IDEMPOTENCY_WINDOW_SECONDS - 1);
    expect(await runIdempotently(request, work, deps)).toEqual({ response: RESPONSE, replayed: true });
  });

  it('a replay is re-checked first: when the check refuses, the stored response is not handed out, and stays stored', async () => {
    const { deps, request } = await setup();
    await runIdempotently(request, async () => RESPONSE, deps);
    const refused = new InvalidGrant('no longer valid');
    const recheck = vi.fn(async () => Promise.reject(refused));
    const work = vi.fn(async () => RESPONSE);
    expect(await rejectionOf(runIdempotently(request, work, deps, recheck))).toBe(refused);
    expect(recheck).toHaveBeenCalledWith(RESPONSE);
    expect(work).not.toHaveBeenCalled();
    expect(await runIdempotently(request, work, deps, async () => {})).toEqual({ response: RESPONSE, replayed: true });
  });

  it('replays the same request within 24 h without running the work', async () => {
    const { deps, request, clock } = await setup();
    await runIdempotently(request, async () => RESPONSE, deps);
    const work = vi.fn(async () => ({ ...RESPONSE, accessToken: 'another' }));
    for (const at of [T0, T0 + 1, T0 + 86_399]) {
      clock.set(at);
      expect(await runIdempotently(request, work, deps)).toEqual({ response: RESPONSE, replayed: true });
    }
    expect(work).not.toHaveBeenCalled();
  });

  it('runs again once 24 h have passed, and remembers the new response', async () => {
    const { deps, request, clock } = await setup();
    await runIdempotently(request, async () => RESPONSE, deps);
    clock.set(T0 + 86_400);
    const later = { ...RESPONSE, accessToken: 'later' };
    expect(await runIdempotently(request, async () => later, deps)).toEqual({ response: later, replayed: false });
    clock.set(T0 + 86_400 + 86_399);
    expect(await runIdempotently(request, async () => RESPONSE, deps)).toEqual({ response: later, replayed: true });
  });

  it('the same reference with another body → 409 invalid_request; the work does not run', async () => {
    const { deps, request } = await setup();
    await runIdempotently(request, async () => RESPONSE, deps);
    const work = vi.fn(async () => RESPONSE);
    const error = await rejectionOf(runIdempotently({ ...request, body: '{"refreshToken":"r2"}' }, work, deps));
    expect(error).toBeInstanceOf(InvalidRequest);
    expect(error).toMatchObject({ status: 409, error: 'invalid_request', description: 'this Request-Reference-No was already used for a different request' });
    expect(work).not.toHaveBeenCalled();
  });

  it('the same reference while the first request runs → 409; afterwards, a replay', async () => {
    const { deps, request } = await setup();
    const gate = deferred<typeof RESPONSE>();
    const started = deferred<void>();
    const first = runIdempotently(
      request,
      () => {
        started.resolve();
        return gate.promise;
      },
      deps,
    );
    await started.promise;
    const work = vi.fn(async () => RESPONSE);
    const error = await rejectionOf(runIdempotently(request, work, deps));
    expect(error).toMatchObject({ status: 409, description: 'a request with this Request-Reference-No is still being processed' });
    expect(work).not.toHaveBeenCalled();
    gate.resolve(RESPONSE);
    expect(await first).toEqual({ response: RESPONSE, replayed: false });
    expect(await runIdempotently(request, work, deps)).toEqual({ response: RESPONSE, replayed: true });
  });

  it('concurrent calls: the work runs once; every other call replays it or gets 409', async () => {
    const { deps, request } = await setup();
    const work = vi.fn(async () => {
      await new Promise((resolve) => setImmediate(resolve));
      return RESPONSE;
    });
    const results = await Promise.allSettled(Array.from({ length: 8 }, () => runIdempotently(request, work, deps)));
    expect(work).toHaveBeenCalledTimes(1);
    const fulfilled = results.filter((r) => r.status === 'fulfilled').map((r) => (r as PromiseFulfilledResult<unknown>).value);
    expect(fulfilled.filter((v) => (v as { replayed: boolean }).replayed === false)).toHaveLength(1);
    for (const value of fulfilled) expect((value as { response: unknown }).response).toEqual(RESPONSE);
    for (const r of results) if (r.status === 'rejected') expect(r.reason).toMatchObject({ status: 409 });
  });

  it('a failure is not remembered: it is rethrown, and the reference can be retried, with any body', async () => {
    const { deps, request, stored } = await setup();
    const refused = new InvalidGrant('refresh token is invalid or expired');
    expect(await rejectionOf(runIdempotently(request, async () => Promise.reject(refused), deps))).toBe(refused);
    const crash = new Error('database down');
    expect(await rejectionOf(runIdempotently(request, async () => Promise.reject(crash), deps))).toBe(crash);
    expect(await runIdempotently({ ...request, body: '{"refreshToken":"r2"}' }, async () => RESPONSE, deps)).toEqual({ response: RESPONSE, replayed: false });
    expect((await stored())?.sealedResponse).not.toBeNull();
  });

  it('another client with the same reference is a request of its own', async () => {
    const { deps, request } = await setup();
    await runIdempotently(request, async () => RESPONSE, deps);
    const theirs = { ...RESPONSE, accessToken: 'theirs' };
    expect(await runIdempotently({ ...request, clientId: 'cid_sandbox_other' }, async () => theirs, deps)).toEqual({ response: theirs, replayed: false });
    expect(await runIdempotently(request, async () => theirs, deps)).toEqual({ response: RESPONSE, replayed: true });
  });

  it('a different reference of the same client is a request of its own', async () => {
    const { deps, request } = await setup();
    await runIdempotently(request, async () => RESPONSE, deps);
    const work = vi.fn(async () => RESPONSE);
    await runIdempotently({ ...request, reference: randomUUID() }, work, deps);
    expect(work).toHaveBeenCalledTimes(1);
  });
});
