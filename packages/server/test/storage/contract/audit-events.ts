import { beforeEach, describe, expect, it } from 'vitest';
import type { Storage } from '../../../src/core/storage/storage.js';
import { T, concurrently, type StorageUnderTest } from './fixtures.js';

/** The audit-event store: its part of the storage contract. */
export function describeAuditEventsContract(subject: StorageUnderTest): void {
  describe('audit events counted', () => {
    let storage: Storage;
    beforeEach(() => {
      storage = subject.storage;
    });

    it('counts a repeated event in one record, losing no count under concurrency, and keeps its first fields', async () => {
      const event = { id: 'minute-1', at: T, type: 'client.authentication_failed', actor: 'ip:10.0.0.1', subject: 'c', outcome: 'failure', details: { method: 'client_secret_basic' } } as const;
      await storage.audit.countAuditEvent(event);
      expect((await storage.audit.listAuditEvents({ limit: 10 }))[0]?.details).toEqual({ method: 'client_secret_basic', count: 1 });
      await concurrently(49, (i) => storage.audit.countAuditEvent({ ...event, at: T + 1 + (i % 50) }));
      await storage.audit.insertAuditEvent({ ...event, id: 'plain', details: { method: 'x' } });
      const listed = await storage.audit.listAuditEvents({ limit: 10 });
      expect(listed.map((e) => [e.id, e.at, e.details])).toEqual([
        ['minute-1', T, { method: 'client_secret_basic', count: 50 }],
        ['plain', T, { method: 'x' }],
      ]);
    });
  });

  describe('audit events', () => {
    let storage: Storage;
    beforeEach(() => {
      storage = subject.storage;
    });

    it('keep the request ID of the request that caused them, and none when no request did', async () => {
      const base = { type: 'client.authentication_failed', actor: 'ip:192.0.2.1', subject: 'cid_sandbox_x', outcome: 'failure' } as const;
      await storage.audit.insertAuditEvent({ ...base, id: `${'0'.repeat(12)}000001aaaaaaaaaaaa`, at: T, details: { method: 'client_secret_basic' }, requestId: 'lb-7f3a:42' });
      await storage.audit.insertAuditEvent({ ...base, id: `${'0'.repeat(12)}000002aaaaaaaaaaaa`, at: T + 1 });
      const listed = await storage.audit.listAuditEvents({ limit: 10 });
      expect(listed.map((e) => e.requestId)).toEqual(['lb-7f3a:42', undefined]);
      expect(listed[0]).toEqual({ ...base, id: `${'0'.repeat(12)}000001aaaaaaaaaaaa`, at: T, details: { method: 'client_secret_basic' }, requestId: 'lb-7f3a:42' });
    });
  });
}
