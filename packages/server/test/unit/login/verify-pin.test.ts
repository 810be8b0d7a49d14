import { describe, expect, it } from 'vitest';
import { issuePin } from '../../../src/core/login/issue-pin.js';
import { verifyPin } from '../../../src/core/login/verify-pin.js';
import { LOGIN, otpSetup, T0 } from './otp-fixtures.js';

/** A fresh challenge at T0 and its code. */
async function challenge() {
  const setup = await otpSetup();
  const started = await issuePin(LOGIN, setup.deps);
  if (!('challengeId' in started)) throw new Error(`no challenge: ${started.reason}`);
  const code = setup.sms.lastCode();
  const wrong = code === '000000' ? '000001' : '000000';
  return { ...setup, id: started.challengeId, code, wrong, verify: (value: string) => verifyPin(started.challengeId, value, setup.deps) };
}

describe('verifyPin', () => {
  it('accepts the right code at once and consumes the challenge', async () => {
    const { storage, id, code, verify } = await challenge();
    const result = await verify(code);
    expect(result).toMatchObject({ ok: true, challenge: { id, mobile: LOGIN.mobile, profileId: LOGIN.profileId, purpose: 'login' } });
    expect((await storage.otpChallenges.findOtpChallenge(id))?.consumedAt).toBe(T0);
  });

  it('accepts the right code 299 s after it was sent', async () => {
    const { clock, code, verify } = await challenge();
    clock.set(T0 + 299);
    expect((await verify(code)).ok).toBe(true);
  });

  it('refuses the right code at 300 s and after: expired', async () => {
    const { clock, code, verify, storage, id } = await challenge();
    clock.set(T0 + 300);
    expect(await verify(code)).toEqual({ ok: false, reason: 'expired' });
    clock.set(T0 + 301);
    expect(await verify(code)).toEqual({ ok: false, reason: 'expired' });
    clock.set(T0 + 86_400);
    expect(await verify(code)).toEqual({ ok: false, reason: 'expired' });
    expect((await storage.otpChallenges.findOtpChallenge(id))?.consumedAt).toBeNull();
  });

  it('is single use: the second right answer gets "used"', async () => {
    const { clock, code, verify } = await challenge();
    expect((await verify(code)).ok).toBe(true);
    clock.advance(1);
    expect(await verify(code)).toEqual({ ok: false, reason: 'used' });
  });

  it('counts down 4 wrong codes, ends the challenge on the 5th, then refuses even the right code', async () => {
    const { code, wrong, verify, storage, id } = await challenge();
    for (const attemptsLeft of [4, 3, 2, 1]) expect(await verify(wrong)).toEqual({ ok: false, reason: 'wrong', attemptsLeft });
    // The 5th wrong entry is the one that ends the challenge (the audit log records it once).
    expect(await verify(wrong)).toEqual({ ok: false, reason: 'exhausted', justNow: true });
    expect(await verify(code)).toEqual({ ok: false, reason: 'exhausted', justNow: false });
    expect(await storage.otpChallenges.findOtpChallenge(id)).toMatchObject({ attempts: 5, consumedAt: null });
  });

  it('accepts the right code after 4 wrong ones', async () => {
    const { code, wrong, verify } = await challenge();
    for (let i = 0; i < 4; i++) await verify(wrong);
    expect((await verify(code)).ok).toBe(true);
  });

  it.each([['12345'], ['1234567'], ['abcdef'], [''], [' 12345'], ['12 345'], ['１２３４５６']])(
    'answers "malformed" to %j without spending an attempt',
    async (input) => {
      const { code, verify, storage, id } = await challenge();
      for (let i = 0; i < 6; i++) expect(await verify(input)).toEqual({ ok: false, reason: 'malformed' });
      expect((await storage.otpChallenges.findOtpChallenge(id))?.attempts).toBe(0);
      expect((await verify(code)).ok).toBe(true);
    },
  );

  it('does not accept the code of another challenge', async () => {
    const setup = await otpSetup();
    const first = await issuePin(LOGIN, setup.deps);
    const firstCode = setup.sms.lastCode();
    const second = await issuePin({ ...LOGIN, requestHash: 'request-hash-2' }, setup.deps);
    if (!('challengeId' in first) || !('challengeId' in second)) throw new Error('no challenge');
    const secondCode = setup.sms.lastCode();
    if (firstCode === secondCode) return; // one in a million: nothing to tell apart
    expect(await verifyPin(second.challengeId, firstCode, setup.deps)).toMatchObject({ ok: false, reason: 'wrong' });
    expect((await verifyPin(first.challengeId, firstCode, setup.deps)).ok).toBe(true);
  });

  it('answers "gone" for an unknown challenge', async () => {
    const { deps } = await otpSetup();
    expect(await verifyPin('no-such-challenge', '123456', deps)).toEqual({ ok: false, reason: 'gone' });
  });

  it('lets exactly one of two concurrent right answers succeed', async () => {
    const { code, verify } = await challenge();
    const results = await Promise.all([verify(code), verify(code)]);
    expect(results.filter((r) => r.ok)).toHaveLength(1);
    expect(results.filter((r) => !r.ok)).toEqual([{ ok: false, reason: 'used' }]);
  });

  it('lets exactly one of ten concurrent right answers succeed', async () => {
    const { code, verify } = await challenge();
    const results = await Promise.all(Array.from({ length: 10 }, () => verify(code)));
    expect(results.filter((r) => r.ok)).toHaveLength(1);
  });

  it('counts every one of concurrent wrong answers, so guessing in parallel gains nothing', async () => {
    const { code, wrong, verify, storage, id } = await challenge();
    const results = await Promise.all(Array.from({ length: 8 }, () => verify(wrong)));
    // Never more than 4 answers of "wrong", each with its own count of tries left.
    const left = results.flatMap((r) => (!r.ok && r.reason === 'wrong' ? [r.attemptsLeft] : []));
    expect(left.length).toBeLessThanOrEqual(4);
    expect(new Set(left).size).toBe(left.length);
    expect(results.every((r) => !r.ok && (r.reason === 'wrong' || r.reason === 'exhausted'))).toBe(true);
    expect((await storage.otpChallenges.findOtpChallenge(id))?.attempts).toBeGreaterThanOrEqual(5);
    expect(await verify(code)).toMatchObject({ ok: false, reason: 'exhausted' });
  });
});
