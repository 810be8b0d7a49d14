import { describe, expect, it } from 'vitest';
import { verifyOtp } from '../../../src/core/otp/verify-otp.js';
import { awaitEntries, entriesOf, issueChallenge, LOGIN, otpSetup, T0 } from './otp-fixtures.js';

/** A fresh challenge issued at T0, its code and a wrong one. */
async function challenge() {
  const setup = await otpSetup();
  await awaitEntries(setup.storage, LOGIN.requestHash);
  const { id, code } = await issueChallenge(LOGIN, setup);
  const wrong = code === '000000' ? '000001' : '000000';
  const stored = () => setup.storage.otpChallenges.findOtpChallenge(id);
  const consume = () => setup.storage.otpChallenges.consumeOtpChallenge(id, setup.clock.nowSeconds());
  return { ...setup, id, code, wrong, stored, consume, verify: (value: string) => verifyOtp(id, value, entriesOf(setup.storage, { id, requestHash: LOGIN.requestHash }), setup.deps) };
}

describe('verifyOtp', () => {
  it('accepts the right code at once, counting the entry and using the challenge up; says what the entry completed', async () => {
    const { code, verify, stored } = await challenge();
    expect(await verify(code)).toEqual({ ok: true, done: { kind: 'completed', credentialVersion: 0 } });
    expect(await stored()).toMatchObject({ attempts: 1, consumedAt: T0 });
  });

  it('accepts the right code 299 s after it was sent', async () => {
    const { clock, code, verify } = await challenge();
    clock.set(T0 + 299);
    expect((await verify(code)).ok).toBe(true);
  });

  it('refuses the right code at 300 s and after: expired, without counting the entry', async () => {
    const { clock, code, verify, stored } = await challenge();
    clock.set(T0 + 300);
    expect(await verify(code)).toEqual({ ok: false, reason: 'expired' });
    clock.set(T0 + 301);
    expect(await verify(code)).toEqual({ ok: false, reason: 'expired' });
    clock.set(T0 + 86_400);
    expect(await verify(code)).toEqual({ ok: false, reason: 'expired' });
    expect(await stored()).toMatchObject({ attempts: 0, consumedAt: null });
  });

  it('is single use: once right, the right code gets "used"', async () => {
    const { clock, code, verify, consume } = await challenge();
    expect((await verify(code)).ok).toBe(true);
    clock.advance(1);
    expect(await verify(code)).toEqual({ ok: false, reason: 'used' });
    expect(await consume()).toBe(false);
  });

  it('counts down 4 wrong codes, ends the challenge on the 5th, then refuses even the right code', async () => {
    const { code, wrong, verify, stored } = await challenge();
    for (const attemptsLeft of [4, 3, 2, 1]) expect(await verify(wrong)).toEqual({ ok: false, reason: 'wrong', attemptsLeft });
    // The 5th wrong entry is the one that ends the challenge (the journey audits it once).
    expect(await verify(wrong)).toEqual({ ok: false, reason: 'exhausted', justNow: true });
    expect(await verify(code)).toEqual({ ok: false, reason: 'exhausted', justNow: false });
    expect(await verify(wrong)).toEqual({ ok: false, reason: 'exhausted', justNow: false });
    expect(await stored()).toMatchObject({ attempts: 5, consumedAt: null });
  });

  it('accepts the right code after 4 wrong ones', async () => {
    const { code, wrong, verify } = await challenge();
    for (let i = 0; i < 4; i++) await verify(wrong);
    expect((await verify(code)).ok).toBe(true);
  });

  it.each([['12345'], ['1234567'], ['abcdef'], [''], [' 12345'], ['12 345'], ['１２３４５６']])(
    'answers "malformed" to %j without spending an entry',
    async (input) => {
      const { code, verify, stored } = await challenge();
      for (let i = 0; i < 6; i++) expect(await verify(input)).toEqual({ ok: false, reason: 'malformed' });
      expect((await stored())?.attempts).toBe(0);
      expect((await verify(code)).ok).toBe(true);
    },
  );

  it('does not accept the code of another challenge', async () => {
    const setup = await otpSetup();
    await awaitEntries(setup.storage, LOGIN.requestHash, 'request-hash-2');
    const first = await issueChallenge(LOGIN, setup);
    const second = await issueChallenge({ ...LOGIN, requestHash: 'request-hash-2' }, setup);
    if (first.code === second.code) return; // one in a million: nothing to tell apart
    const enter = (id: string, requestHash: string) => entriesOf(setup.storage, { id, requestHash });
    expect(await verifyOtp(second.id, first.code, enter(second.id, 'request-hash-2'), setup.deps)).toMatchObject({ ok: false, reason: 'wrong' });
    // Nor an entry made for another journey.
    expect(await verifyOtp(first.id, first.code, enter(first.id, 'request-hash-2'), setup.deps)).toEqual({ ok: false, reason: 'expired' });
    expect((await verifyOtp(first.id, first.code, enter(first.id, LOGIN.requestHash), setup.deps)).ok).toBe(true);
  });

  it('answers "gone" for an unknown challenge', async () => {
    const { deps, storage } = await otpSetup();
    expect(await verifyOtp('no-such-challenge', '123456', entriesOf(storage, { id: 'no-such-challenge', requestHash: LOGIN.requestHash }), deps)).toEqual({
      ok: false,
      reason: 'gone',
    });
  });

  it('a challenge whose code was never delivered (retired at once) answers "used"', async () => {
    const { code, verify, consume } = await challenge();
    expect(await consume()).toBe(true);
    expect(await verify(code)).toEqual({ ok: false, reason: 'used' });
  });

  it('of ten concurrent right answers, exactly one is accepted; the others find the challenge used', async () => {
    const { code, verify, stored } = await challenge();
    const results = await Promise.all(Array.from({ length: 10 }, () => verify(code)));
    expect(results.filter((r) => r.ok)).toHaveLength(1);
    expect(results.filter((r) => !r.ok)).toEqual(Array.from({ length: 9 }, () => ({ ok: false, reason: 'used' })));
    expect(await stored()).toMatchObject({ attempts: 1, consumedAt: T0 });
  });

  it('counts every one of concurrent wrong answers, so guessing in parallel gains nothing', async () => {
    const { code, wrong, verify, stored } = await challenge();
    const results = await Promise.all(Array.from({ length: 8 }, () => verify(wrong)));
    const left = results.flatMap((r) => (!r.ok && r.reason === 'wrong' ? [r.attemptsLeft] : []));
    expect(left.sort()).toEqual([1, 2, 3, 4]);
    expect(results.filter((r) => !r.ok && r.reason === 'exhausted' && r.justNow)).toHaveLength(1);
    expect(results.every((r) => !r.ok && (r.reason === 'wrong' || r.reason === 'exhausted'))).toBe(true);
    expect((await stored())?.attempts).toBe(5);
    expect(await verify(code)).toMatchObject({ ok: false, reason: 'exhausted' });
  });
});
