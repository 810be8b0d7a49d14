import { describe, expect, it } from 'vitest';
import { createAuditLog, type AuditRecord } from '../../../src/core/audit/audit-log.js';
import { createClientAuthFailureAudit, MANY_ADDRESSES_ACTOR } from '../../../src/core/audit/client-auth-failures.js';
import { fixedClock } from '../../../src/core/clock.js';
import { InvalidClient } from '../../../src/core/errors.js';
import type { Storage } from '../../../src/core/storage/storage.js';
import { memoryStorage, T0 } from '../otp/otp-fixtures.js';

/** The start of a minute. */
const MINUTE = T0 - (T0 % 60);
const BOUND = 20;

async function setup() {
  const storage = await memoryStorage();
  const clock = fixedClock(MINUTE);
  const record = createClientAuthFailureAudit(createAuditLog(storage.audit, clock), clock, { groupsPerMinute: BOUND });
  const madeUp = (i: number) => new InvalidClient('client authentication failed', 'client_secret_basic', { claimedClientId: `cid_sandbox_madeup${i}` });
  const wrongSecret = (id: string) => new InvalidClient('client authentication failed', 'client_secret_basic', { claimedClientId: id, claimedClientKnown: true });
  return { storage, clock, record, madeUp, wrongSecret };
}

async function rows(storage: Storage): Promise<AuditRecord[]> {
  return storage.audit.listAuditEvents({ limit: 100_000, type: 'client.authentication_failed' });
}

const total = (records: AuditRecord[]) => records.reduce((sum, r) => sum + Number(r.details?.['count'] ?? 0), 0);

describe('failed client authentications: a bounded number of audit rows per instance', () => {
  it('1000 made-up client IDs from one address in a minute: one row, counting all 1000, without the IDs', async () => {
    const s = await setup();
    for (let i = 0; i < 1000; i++) await s.record(s.madeUp(i), { ip: '203.0.113.5' });
    const written = await rows(s.storage);
    expect(written).toEqual([
      expect.objectContaining({ actor: 'ip:203.0.113.5', subject: null, details: { method: 'client_secret_basic', reason: 'client authentication failed', client: 'unknown', count: 1000 } }),
    ]);
    expect(JSON.stringify(written)).not.toContain('madeup');
  });

  it('1000 made-up client IDs from 1000 addresses in a minute: at most the bound plus one row, counting all 1000; the next minute starts afresh', async () => {
    const s = await setup();
    for (let i = 0; i < 1000; i++) await s.record(s.madeUp(i), { ip: `198.51.100.${i % 250}-${i}` });
    let written = await rows(s.storage);
    expect(written.length).toBeLessThanOrEqual(BOUND + 1);
    expect(written.filter((r) => r.actor !== MANY_ADDRESSES_ACTOR)).toHaveLength(BOUND);
    expect(written.filter((r) => r.actor === MANY_ADDRESSES_ACTOR)).toEqual([
      expect.objectContaining({ subject: null, details: expect.objectContaining({ client: 'unknown', count: 1000 - BOUND }) }),
    ]);
    expect(total(written)).toBe(1000);

    s.clock.advance(60);
    for (let i = 0; i < 1000; i++) await s.record(s.madeUp(i), { ip: `192.0.2.${i % 250}-${i}` });
    written = await rows(s.storage);
    expect(written.length).toBeLessThanOrEqual(2 * (BOUND + 1));
    expect(total(written)).toBe(2000);
  });

  it('a real client’s failures keep its client ID, per address; past the bound under a flood, still under its ID', async () => {
    const s = await setup();
    await s.record(s.wrongSecret('cid_sandbox_real'), { ip: '203.0.113.9' });
    await s.record(s.wrongSecret('cid_sandbox_real'), { ip: '203.0.113.9' });
    for (let i = 0; i < 500; i++) await s.record(s.madeUp(i), { ip: `198.51.100.${i % 250}-${i}` });
    // The flood has used up the minute's distinct events: a new address of the real client is folded, not lost.
    await s.record(s.wrongSecret('cid_sandbox_real'), { ip: '203.0.113.10' });
    await s.record(s.wrongSecret('cid_sandbox_real'), { ip: '203.0.113.9' });
    const real = (await rows(s.storage)).filter((r) => r.subject === 'cid_sandbox_real');
    // Events of one minute are listed in the order of their IDs, a digest: sorted here by actor.
    expect(real.map((r) => [r.actor, r.details]).sort(([a], [b]) => String(a).localeCompare(String(b)))).toEqual([
      [MANY_ADDRESSES_ACTOR, { method: 'client_secret_basic', reason: 'client authentication failed', count: 1 }],
      ['ip:203.0.113.9', { method: 'client_secret_basic', reason: 'client authentication failed', count: 3 }],
    ]);
    expect((await rows(s.storage)).length).toBeLessThanOrEqual(BOUND + 2);
  });

  it('without a claimed client ID (no or malformed credentials): per address, subject null', async () => {
    const s = await setup();
    for (let i = 0; i < 5; i++) await s.record(new InvalidClient('malformed HTTP Basic credentials', 'client_secret_basic'), { ip: '203.0.113.7' });
    expect(await rows(s.storage)).toEqual([
      expect.objectContaining({ actor: 'ip:203.0.113.7', subject: null, details: { method: 'client_secret_basic', reason: 'malformed HTTP Basic credentials', count: 5 } }),
    ]);
  });
});
