import { describe, expect, it } from 'vitest';
import { issuePin, resendPin } from '../../../src/core/login/issue-pin.js';
import { verifyPin } from '../../../src/core/login/verify-pin.js';
import type { SendLimiter } from '../../../src/core/limits/send-limiter.js';
import { LOGIN, openLimiter, otpSetup, smsDown, T0 } from './otp-fixtures.js';

const CONTEXT = { clientName: LOGIN.clientName, ip: LOGIN.ip };

async function withChallenge(limiter?: SendLimiter) {
  const setup = await otpSetup(limiter);
  const result = await issuePin(LOGIN, setup.deps);
  if (!('challengeId' in result)) throw new Error(`no challenge: ${result.reason}`);
  const id = result.challengeId;
  return {
    ...setup,
    id,
    verify: (code: string) => verifyPin(id, code, setup.deps),
    resend: () => resendPin(id, CONTEXT, setup.deps),
  };
}

/** A code that is not `code`. */
const other = (code: string) => (code === '000000' ? '000001' : '000000');

describe('issuePin', () => {
  it('stores a fresh challenge and sends its code by SMS to the mobile', async () => {
    const { storage, sms, id, hasher } = await withChallenge();
    expect(sms.messages).toHaveLength(1);
    expect(sms.messages[0]?.to).toBe(LOGIN.mobile);
    const code = sms.lastCode();
    expect(await storage.otpChallenges.findOtpChallenge(id)).toEqual({
      id,
      requestHash: LOGIN.requestHash,
      purpose: 'login',
      mobile: LOGIN.mobile,
      profileId: LOGIN.profileId,
      pendingPinHash: null,
      codeHash: hasher.hash(id, code),
      attempts: 0,
      resends: 0,
      lastSentAt: T0,
      expiresAt: T0 + 300,
      createdAt: T0,
      consumedAt: null,
    });
  });

  it('stores the code only as its keyed hash', async () => {
    const { storage, sms, id } = await withChallenge();
    const code = sms.lastCode();
    const stored = await storage.otpChallenges.findOtpChallenge(id);
    expect(stored?.codeHash).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(JSON.stringify(stored)).not.toContain(code);
  });

  it('gives every challenge a new ID that sorts in creation order, also within one second', async () => {
    const { deps } = await otpSetup();
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) {
      const result = await issuePin(LOGIN, deps);
      if ('challengeId' in result) ids.push(result.challengeId);
    }
    expect(new Set(ids).size).toBe(20);
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{18}[A-Za-z0-9_-]{16}$/);
    expect([...ids].sort()).toEqual(ids);
  });

  it('writes a message naming the service, the consumer and the expiry, warning not to share the code', async () => {
    const { sms } = await withChallenge();
    const body = sms.messages[0]?.body ?? '';
    const code = sms.lastCode();
    expect(body).toContain('Connect');
    expect(body).toContain('Acme Shop');
    expect(body).toContain('5 minutes');
    expect(body).toMatch(/never share/i);
    expect(body).toBe(
      `${code} is your Connect one-time PIN to link your account to Acme Shop. ` +
        'It expires in 5 minutes. Never share this code with anyone, not even Connect staff.',
    );
  });

  it('takes one send from the budgets of the mobile and the address', async () => {
    const limiter = openLimiter();
    await withChallenge(limiter);
    expect(limiter.calls).toEqual([[LOGIN.mobile, LOGIN.ip]]);
  });

  it('sends nothing and stores nothing when a send limit is reached', async () => {
    const limiter: SendLimiter = { take: async () => ({ retryAfterSeconds: 420 }) };
    const { storage, sms, deps } = await otpSetup(limiter);
    expect(await issuePin(LOGIN, deps)).toEqual({ reason: 'rate_limited', retryAfterSeconds: 420 });
    expect(sms.messages).toEqual([]);
    expect(await storage.otpChallenges.findLatestOtpChallenge(LOGIN.requestHash)).toBeUndefined();
  });

  it('answers "sms_unavailable" when the SMS fails, and the challenge can never be answered', async () => {
    const { storage, sms, deps } = await otpSetup();
    sms.failWith = smsDown();
    expect(await issuePin(LOGIN, deps)).toEqual({ reason: 'sms_unavailable' });
    const code = sms.lastCode();
    const challenge = await storage.otpChallenges.findLatestOtpChallenge(LOGIN.requestHash);
    expect(challenge?.consumedAt).toBe(T0);
    const result = await verifyPin(challenge!.id, code, deps);
    expect(result.ok).toBe(false);
  });

  it('lets other sender failures through', async () => {
    const { sms, deps } = await otpSetup();
    sms.failWith = new TypeError('a bug');
    await expect(issuePin(LOGIN, deps)).rejects.toThrow(TypeError);
  });
});

describe('resendPin', () => {
  it('refuses before 30 s with the seconds left', async () => {
    const { clock, sms, resend } = await withChallenge();
    expect(await resend()).toEqual({ reason: 'too_soon', retryAfterSeconds: 30 });
    clock.set(T0 + 29);
    expect(await resend()).toEqual({ reason: 'too_soon', retryAfterSeconds: 1 });
    expect(sms.messages).toHaveLength(1);
  });

  it('sends a new code at 30 s; the old code stops working and the new one works', async () => {
    const { clock, sms, resend, verify } = await withChallenge();
    const oldCode = sms.lastCode();
    clock.set(T0 + 30);
    expect(await resend()).toEqual({ sent: true });
    expect(sms.messages).toHaveLength(2);
    expect(sms.messages[1]?.to).toBe(LOGIN.mobile);
    const newCode = sms.lastCode();
    if (newCode !== oldCode) expect(await verify(oldCode)).toMatchObject({ ok: false, reason: 'wrong' });
    expect((await verify(newCode)).ok).toBe(true);
  });

  it('gives the new code a full 300 s from its own send', async () => {
    const { clock, sms, resend, verify, storage, id } = await withChallenge();
    clock.set(T0 + 100);
    await resend();
    expect(await storage.otpChallenges.findOtpChallenge(id)).toMatchObject({ lastSentAt: T0 + 100, expiresAt: T0 + 400, resends: 1 });
    const code = sms.lastCode();
    clock.set(T0 + 400);
    expect(await verify(code)).toEqual({ ok: false, reason: 'expired' });
    clock.set(T0 + 399);
    expect((await verify(code)).ok).toBe(true);
  });

  it('allows 3 resends, 30 s apart, then "no_more_resends"', async () => {
    const { clock, sms, resend, verify } = await withChallenge();
    for (const at of [30, 60, 90]) {
      clock.set(T0 + at);
      expect(await resend(), `resend at ${at}`).toEqual({ sent: true });
    }
    clock.set(T0 + 119);
    expect(await resend()).toEqual({ reason: 'no_more_resends' });
    clock.set(T0 + 600);
    // Expired by now: over for good, never revived by a resend.
    expect(await resend()).toEqual({ reason: 'gone' });
    expect(sms.messages).toHaveLength(4);
    clock.set(T0 + 90 + 299);
    expect((await verify(sms.lastCode())).ok).toBe(true);
  });

  it('keeps counting wrong entries across a resend', async () => {
    const { clock, sms, resend, verify } = await withChallenge();
    for (let i = 0; i < 4; i++) await verify(other(sms.lastCode()));
    clock.set(T0 + 30);
    await resend();
    expect(await verify(other(sms.lastCode()))).toMatchObject({ ok: false, reason: 'exhausted' });
    expect(await verify(sms.lastCode())).toMatchObject({ ok: false, reason: 'exhausted' });
  });

  it('answers "gone" for a used or unknown challenge', async () => {
    const { clock, sms, resend, verify, deps } = await withChallenge();
    await verify(sms.lastCode());
    clock.set(T0 + 30);
    expect(await resend()).toEqual({ reason: 'gone' });
    expect(await resendPin('no-such-challenge', CONTEXT, deps)).toEqual({ reason: 'gone' });
    expect(sms.messages).toHaveLength(1);
  });

  it('within the send limits: a refused resend keeps the current code', async () => {
    let refuse = false;
    const limiter: SendLimiter = { take: async () => (refuse ? { retryAfterSeconds: 60 } : undefined) };
    const { clock, sms, resend, verify } = await withChallenge(limiter);
    refuse = true;
    clock.set(T0 + 30);
    expect(await resend()).toEqual({ reason: 'rate_limited', retryAfterSeconds: 60 });
    expect(sms.messages).toHaveLength(1);
    expect((await verify(sms.lastCode())).ok).toBe(true);
  });

  it('answers "sms_unavailable" when the new code cannot be sent', async () => {
    const { clock, sms, resend } = await withChallenge();
    sms.failWith = smsDown();
    clock.set(T0 + 30);
    expect(await resend()).toEqual({ reason: 'sms_unavailable' });
  });

  it('sends one new code for concurrent resends', async () => {
    const { clock, sms, resend, storage, id } = await withChallenge();
    clock.set(T0 + 30);
    const results = await Promise.all(Array.from({ length: 5 }, () => resend()));
    expect(results.filter((r) => 'sent' in r)).toHaveLength(1);
    expect(results.filter((r) => 'reason' in r && r.reason === 'too_soon')).toHaveLength(4);
    expect(sms.messages).toHaveLength(2);
    expect((await storage.otpChallenges.findOtpChallenge(id))?.resends).toBe(1);
  });
});
