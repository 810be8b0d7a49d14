import { describe, expect, it } from 'vitest';
import { deliverOtp, newChallenge, resendOtp } from '../../../src/core/otp/issue-otp.js';
import { verifyOtp } from '../../../src/core/otp/verify-otp.js';
import type { SendLimiter } from '../../../src/core/limits/send-limiter.js';
import { createAuditLog } from '../../../src/core/audit/audit-log.js';
import { SmsDeliveryFailed, type SmsSender } from '../../../src/core/sms/sms-sender.js';
import { StorageUnavailable } from '../../../src/core/storage-errors.js';
import { awaitEntries, CONTEXT, entriesOf, issueChallenge, LOGIN, memoryStorage, openLimiter, otpSetup, recordingSender, smsDown, T0 } from './otp-fixtures.js';

/** What deliverOtp needs, with a log that keeps its lines. */
async function deliveryDeps(sms: SmsSender) {
  const storage = await memoryStorage();
  const lines: Array<{ details: object; message: string }> = [];
  return { storage, lines, sms, audit: createAuditLog(storage.audit, { nowSeconds: () => T0 } as never), log: { warn: (details: object, message: string) => lines.push({ details, message }) } };
}

/** A challenge of {@link LOGIN} issued at T0, with its code sent. */
async function withChallenge(sends?: SendLimiter) {
  const setup = await otpSetup(sends);
  await awaitEntries(setup.storage, LOGIN.requestHash);
  const { id, code } = await issueChallenge(LOGIN, setup);
  return {
    ...setup,
    id,
    code,
    verify: (value: string) => verifyOtp(id, value, entriesOf(setup.storage, { id, requestHash: LOGIN.requestHash }), setup.deps),
    resend: () => resendOtp(id, CONTEXT, setup.deps),
  };
}

/** A code that is not `code`. */
const other = (code: string) => (code === '000000' ? '000001' : '000000');

describe('newChallenge', () => {
  it('makes a fresh challenge and its 6-digit code, storing nothing itself', async () => {
    const { storage, clock, hasher } = await otpSetup();
    const { record, code } = newChallenge(LOGIN, { hasher, clock });
    expect(code).toMatch(/^\d{6}$/);
    expect(record).toEqual({
      id: record.id,
      requestHash: LOGIN.requestHash,
      purpose: 'login',
      mobile: LOGIN.mobile,
      profileId: LOGIN.profileId,
      pendingPinHash: null,
      codeHash: hasher.hash(record.id, code),
      attempts: 0,
      resends: 0,
      lastSentAt: T0,
      expiresAt: T0 + 300,
      createdAt: T0,
      consumedAt: null,
    });
    expect(await storage.otpChallenges.findLatestOtpChallenge(LOGIN.requestHash)).toBeUndefined();
  });

  it('keeps the code only as its keyed hash', async () => {
    const { clock, hasher } = await otpSetup();
    const { record, code } = newChallenge(LOGIN, { hasher, clock });
    expect(record.codeHash).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(JSON.stringify(record)).not.toContain(code);
  });

  it('gives every challenge a new ID that sorts in creation order, also within one second; the newest is the latest', async () => {
    const setup = await otpSetup();
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) ids.push((await issueChallenge(LOGIN, setup)).id);
    expect(new Set(ids).size).toBe(20);
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{18}[A-Za-z0-9_-]{16}$/);
    expect([...ids].sort()).toEqual(ids);
    expect((await setup.storage.otpChallenges.findLatestOtpChallenge(LOGIN.requestHash))?.id).toBe(ids.at(-1));
  });
});

describe('deliverOtp', () => {
  it('sends the code to the mobile in a message naming the service, the client and the expiry, warning not to share it', async () => {
    const sms = recordingSender();
    expect(await deliverOtp(LOGIN.mobile, '012345', CONTEXT, await deliveryDeps(sms))).toBe(true);
    expect(sms.messages).toEqual([
      {
        to: LOGIN.mobile,
        body:
          '012345 is your Connect code to link your account to Acme Shop. ' +
          'It expires in 5 minutes. Never share this code with anyone, not even Connect staff.\n\n' +
          '@auth.connect.test #012345',
      },
    ]);
  });

  it('answers false when the gateway is down: audited with the reason, no line of its own (the outage is logged once)', async () => {
    const sms = recordingSender();
    sms.failWith = new SmsDeliveryFailed('gateway timed out');
    const deps = await deliveryDeps(sms);
    expect(await deliverOtp(LOGIN.mobile, '012345', CONTEXT, deps)).toBe(false);
    expect(deps.lines).toHaveLength(0);
    expect(await deps.storage.audit.listAuditEvents({ type: 'sms.send_failed', limit: 10 })).toMatchObject([
      { actor: `ip:${CONTEXT.address.ip}`, subject: CONTEXT.profileId, outcome: 'failure', details: { client_id: 'acme', reason: 'gateway timed out' } },
    ]);
  });

  it('answers false when the gateway refuses the message: one line without the code or the whole mobile, and audited with the reason', async () => {
    const sms = recordingSender();
    sms.failWith = new SmsDeliveryFailed('gateway answered HTTP 400', { refused: true });
    const deps = await deliveryDeps(sms);
    expect(await deliverOtp(LOGIN.mobile, '012345', CONTEXT, deps)).toBe(false);
    expect(deps.lines).toHaveLength(1);
    const line = JSON.stringify(deps.lines[0]);
    expect(line).not.toContain('012345');
    expect(line).not.toContain(LOGIN.mobile);
    expect(deps.lines[0]).toMatchObject({ details: { mobile: '+63******4567', clientId: 'acme', reason: 'gateway answered HTTP 400' } });
    expect(await deps.storage.audit.listAuditEvents({ type: 'sms.send_failed', limit: 10 })).toMatchObject([
      { actor: `ip:${CONTEXT.address.ip}`, subject: CONTEXT.profileId, outcome: 'failure', details: { client_id: 'acme', reason: 'gateway answered HTTP 400' } },
    ]);
  });

  it('lets other sender failures through (a storage failure answers 503)', async () => {
    const sms = recordingSender();
    const deps = await deliveryDeps(sms);
    sms.failWith = new TypeError('a bug');
    await expect(deliverOtp(LOGIN.mobile, '012345', CONTEXT, deps)).rejects.toThrow(TypeError);
    sms.failWith = new StorageUnavailable('down');
    await expect(deliverOtp(LOGIN.mobile, '012345', CONTEXT, deps)).rejects.toThrow(StorageUnavailable);
    expect(await deps.storage.audit.listAuditEvents({ type: 'sms.send_failed', limit: 10 })).toEqual([]);
  });
});

describe('resendOtp', () => {
  it('refuses before 30 s with the seconds left', async () => {
    const { clock, sms, resend } = await withChallenge();
    expect(await resend()).toEqual({ reason: 'too_soon', retryAfterSeconds: 30 });
    clock.set(T0 + 29);
    expect(await resend()).toEqual({ reason: 'too_soon', retryAfterSeconds: 1 });
    expect(sms.messages).toHaveLength(1);
  });

  it('sends a new code at 30 s; the old code stops working and the new one works', async () => {
    const { clock, sms, code, resend, verify } = await withChallenge();
    clock.set(T0 + 30);
    expect(await resend()).toEqual({ sent: true });
    expect(sms.messages).toHaveLength(2);
    expect(sms.messages[1]?.to).toBe(LOGIN.mobile);
    expect(sms.messages[1]?.body).toContain(CONTEXT.clientName);
    const fresh = sms.lastCode();
    if (fresh !== code) expect(await verify(code)).toMatchObject({ ok: false, reason: 'wrong' });
    expect((await verify(fresh)).ok).toBe(true);
  });

  it('takes one send from the budgets of the mobile and the address', async () => {
    const sends = openLimiter();
    const { clock, resend } = await withChallenge(sends);
    clock.set(T0 + 30);
    await resend();
    expect(sends.calls).toEqual([[LOGIN.mobile, CONTEXT.address]]);
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

  it('resends until the second before the expiry, not at it', async () => {
    const early = await withChallenge();
    early.clock.set(T0 + 299);
    expect(await early.resend()).toEqual({ sent: true });
    const late = await withChallenge();
    late.clock.set(T0 + 300);
    expect(await late.resend()).toEqual({ reason: 'gone' });
    expect(late.sms.messages).toHaveLength(1);
  });

  it('keeps counting wrong entries across a resend', async () => {
    const { clock, sms, code, resend, verify } = await withChallenge();
    for (let i = 0; i < 4; i++) await verify(other(code));
    clock.set(T0 + 30);
    await resend();
    expect(await verify(other(sms.lastCode()))).toMatchObject({ ok: false, reason: 'exhausted' });
    expect(await verify(sms.lastCode())).toMatchObject({ ok: false, reason: 'exhausted' });
  });

  it('answers "gone" for a used or unknown challenge', async () => {
    const { clock, sms, storage, id, resend, deps } = await withChallenge();
    expect(await storage.otpChallenges.consumeOtpChallenge(id, T0)).toBe(true);
    clock.set(T0 + 30);
    expect(await resend()).toEqual({ reason: 'gone' });
    expect(await resendOtp('no-such-challenge', CONTEXT, deps)).toEqual({ reason: 'gone' });
    expect(sms.messages).toHaveLength(1);
  });

  it('within the send limits: a refused resend keeps the current code', async () => {
    let refuse = false;
    const sends: SendLimiter = { take: async () => (refuse ? { budget: 'mobile', retryAfterSeconds: 60 } : undefined), giveBack: async () => {} };
    const { clock, sms, code, resend, verify } = await withChallenge(sends);
    refuse = true;
    clock.set(T0 + 30);
    expect(await resend()).toEqual({ reason: 'rate_limited', budget: 'mobile', retryAfterSeconds: 60 });
    expect(sms.messages).toHaveLength(1);
    expect((await verify(code)).ok).toBe(true);
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
