import { beforeEach, describe, expect, it } from 'vitest';
import { purgeExpired } from '../../../src/core/retention/purge.js';
import type { Storage } from '../../../src/core/storage/storage.js';
import { T, authorizationRequest, challenge, customerSession, authorizationCode, tokenSession, type StorageUnderTest } from './fixtures.js';

/** The purge of expired records, across the stores: its part of the storage contract. */
export function describePurgeContract(subject: StorageUnderTest): void {
  describe('purge of expired records', () => {
    let storage: Storage;
    beforeEach(() => {
      storage = subject.storage;
    });

    it('deletes codes at their expiry, not a second before, redeemed or not, in batches', async () => {
      await storage.codes.insertAuthorizationCode(authorizationCode({ codeHash: 'live', expiresAt: T + 301 }));
      for (const n of [1, 2, 3, 4, 5]) await storage.codes.insertAuthorizationCode(authorizationCode({ codeHash: `old-${n}` }));
      await storage.codes.insertAuthorizationCode(authorizationCode({ codeHash: 'old-6', consumedAt: T }));
      expect(await storage.codes.deleteExpiredAuthorizationCodes(T + 299, 10)).toBe(0);
      expect(await storage.codes.deleteExpiredAuthorizationCodes(T + 300, 2)).toBe(2);
      expect(await storage.codes.deleteExpiredAuthorizationCodes(T + 300, 2)).toBe(2);
      expect(await storage.codes.deleteExpiredAuthorizationCodes(T + 300, 2)).toBe(2);
      expect(await storage.codes.deleteExpiredAuthorizationCodes(T + 300, 2)).toBe(0);
      expect(await storage.codes.findAuthorizationCode('live')).toBeDefined();
      expect(await storage.codes.findAuthorizationCode('old-6')).toBeUndefined();
    });

    it('deletes journeys at their expiry, not a second before', async () => {
      await storage.authorizationRequests.insertAuthorizationRequest(authorizationRequest({ idHash: 'old' }));
      await storage.authorizationRequests.insertAuthorizationRequest(authorizationRequest({ idHash: 'live', expiresAt: T + 901 }));
      expect(await storage.authorizationRequests.deleteExpiredAuthorizationRequests(T + 899, 10)).toBe(0);
      expect(await storage.authorizationRequests.deleteExpiredAuthorizationRequests(T + 900, 10)).toBe(1);
      expect(await storage.authorizationRequests.findAuthorizationRequest('live')).toBeDefined();
    });

    it('deletes customer sessions once ended, expired or idle, never a live one', async () => {
      const sessions = storage.customerSessions;
      await sessions.insertCustomerSession(customerSession({ idHash: 'live', lastSeenAt: T + 1 }));
      await sessions.insertCustomerSession(customerSession({ idHash: 'idle', lastSeenAt: T }));
      await sessions.insertCustomerSession(customerSession({ idHash: 'ended', lastSeenAt: T + 1 }));
      await sessions.endCustomerSession('ended', T + 1);
      await sessions.insertCustomerSession(customerSession({ idHash: 'expired', lastSeenAt: T + 100, expiresAt: T + 1800 }));
      expect(await sessions.deleteEndedCustomerSessions(T + 1799, 1800, 10)).toBe(1);
      expect(await sessions.findCustomerSession('ended')).toBeUndefined();
      expect(await sessions.deleteEndedCustomerSessions(T + 1800, 1800, 10)).toBe(2);
      expect(await sessions.findCustomerSession('idle')).toBeUndefined();
      expect(await sessions.findCustomerSession('expired')).toBeUndefined();
      expect(await sessions.useCustomerSession('live', T + 1800, 1800)).toBeDefined();
    });

    it('deletes one-time PIN challenges expired by the cutoff', async () => {
      await storage.otpChallenges.insertOtpChallenge(challenge({ id: 'old' }));
      await storage.otpChallenges.insertOtpChallenge(challenge({ id: 'live', expiresAt: T + 301 }));
      expect(await storage.otpChallenges.deleteOtpChallengesExpiredBy(T + 299, 10)).toBe(0);
      expect(await storage.otpChallenges.deleteOtpChallengesExpiredBy(T + 300, 10)).toBe(1);
      expect(await storage.otpChallenges.findOtpChallenge('live')).toBeDefined();
    });

    it('deletes a token session only once its refresh and access tokens have both expired, revoked or not', async () => {
      const at = T + 604_800;
      await storage.tokenSessions.insertTokenSession(tokenSession({ sid: 'expired' }));
      await storage.tokenSessions.insertTokenSession(tokenSession({ sid: 'revoked', refreshJti: 'r2', accessJti: 'a2' }));
      await storage.tokenSessions.revokeTokenSession('revoked', T + 10);
      await storage.tokenSessions.insertTokenSession(tokenSession({ sid: 'revoked-live', refreshJti: 'r3', accessJti: 'a3', refreshExpiresAt: at + 1 }));
      await storage.tokenSessions.revokeTokenSession('revoked-live', T + 10);
      await storage.tokenSessions.insertTokenSession(tokenSession({ sid: 'access-outlives', refreshJti: 'r4', accessJti: 'a4', accessExpiresAt: at + 1 }));
      expect(await storage.tokenSessions.deleteExpiredTokenSessions(at - 1, 10)).toBe(0);
      expect(await storage.tokenSessions.deleteExpiredTokenSessions(at, 10)).toBe(2);
      expect(await storage.tokenSessions.findTokenSession('revoked-live')).toBeDefined();
      expect(await storage.tokenSessions.findTokenSession('access-outlives')).toBeDefined();
      expect(await storage.tokenSessions.deleteExpiredTokenSessions(at + 1, 10)).toBe(2);
    });

    it('deletes revocations, stored responses and counters at their expiry, in batches', async () => {
      for (const n of [1, 2, 3]) {
        await storage.revokedTokens.revokeToken({ jti: `j${n}`, clientId: 'c', revokedAt: T, expiresAt: T + 60 });
        await storage.idempotentRequests.claimIdempotentRequest({
          clientId: 'c',
          reference: `ref-${n}`,
          requestHash: 'h',
          sealedResponse: null,
          createdAt: T,
          expiresAt: T + 60,
        });
      }
      await storage.idempotentRequests.claimIdempotentRequest({ clientId: 'c', reference: 'live', requestHash: 'h', sealedResponse: null, createdAt: T, expiresAt: T + 61 });
      expect(await storage.revokedTokens.deleteExpiredRevocations(T + 59, 2)).toBe(0);
      expect(await storage.revokedTokens.deleteExpiredRevocations(T + 60, 2)).toBe(2);
      expect(await storage.revokedTokens.deleteExpiredRevocations(T + 60, 2)).toBe(1);
      expect(await storage.idempotentRequests.deleteExpiredIdempotentRequests(T + 59, 2)).toBe(0);
      expect(await storage.idempotentRequests.deleteExpiredIdempotentRequests(T + 60, 2)).toBe(2);
      expect(await storage.idempotentRequests.deleteExpiredIdempotentRequests(T + 60)).toBe(1);
      expect(await storage.idempotentRequests.deleteExpiredIdempotentRequests(T + 60)).toBe(0);
      const again = await storage.idempotentRequests.claimIdempotentRequest({ clientId: 'c', reference: 'live', requestHash: 'x', sealedResponse: null, createdAt: T + 60, expiresAt: T + 120 });
      expect(again?.requestHash).toBe('h');
      const MS = T * 1000;
      for (const n of [1, 2, 3]) await storage.rateLimitCounters.addToRateLimitCounter(`k${n}`, 1, MS + 1000, MS, false);
      expect(await storage.rateLimitCounters.deleteExpiredRateLimitCounters(MS + 1000, 2)).toBe(2);
      expect(await storage.rateLimitCounters.deleteExpiredRateLimitCounters(MS + 1000, 2)).toBe(1);
    });

    it('deletes outbox messages and audit events older than the cutoff, keeping those at it', async () => {
      await storage.outbox.insertOutboxMessage({ id: 'm1', to: '+639171234567', body: 'old', sentAt: T - 1 });
      await storage.outbox.insertOutboxMessage({ id: 'm2', to: '+639171234567', body: 'kept', sentAt: T });
      expect(await storage.outbox.deleteOutboxMessagesSentBefore(T, 10)).toBe(1);
      expect((await storage.outbox.listOutboxMessages('+639171234567', 10)).map((m) => m.id)).toEqual(['m2']);
      for (const [id, at] of [['a1', T - 2], ['a2', T - 1], ['a3', T]] as const) {
        await storage.audit.insertAuditEvent({ id, at, type: 'client.created', actor: 'cli', subject: null, outcome: 'success' });
      }
      expect(await storage.audit.deleteAuditEventsBefore(T, 1)).toBe(1);
      expect(await storage.audit.deleteAuditEventsBefore(T, 1)).toBe(1);
      expect(await storage.audit.deleteAuditEventsBefore(T, 1)).toBe(0);
      expect((await storage.audit.listAuditEvents({ limit: 10 })).map((e) => e.id)).toEqual(['a3']);
    });

    it('purges every kind in batches until none is left, and counts each', async () => {
      for (let n = 0; n < 7; n++) await storage.codes.insertAuthorizationCode(authorizationCode({ codeHash: `c${n}` }));
      await storage.codes.insertAuthorizationCode(authorizationCode({ codeHash: 'live', expiresAt: T + 10_000 }));
      await storage.audit.insertAuditEvent({ id: 'old', at: T + 300 - 86_400 - 1, type: 'client.created', actor: 'cli', subject: null, outcome: 'success' });
      await storage.audit.insertAuditEvent({ id: 'new', at: T + 300 - 86_400, type: 'client.created', actor: 'cli', subject: null, outcome: 'success' });
      const progress: number[] = [];
      const counts = await purgeExpired(storage, {
        now: T + 300,
        sessionIdleSeconds: 1800,
        auditRetentionDays: 1,
        batchSize: 3,
        onProgress: (kind, soFar) => kind === 'authorizationCodes' && progress.push(soFar),
      });
      expect(counts).toMatchObject({ authorizationCodes: 7, auditEvents: 1, tokenSessions: 0 });
      expect(progress).toEqual([3, 6, 7]);
      expect(await storage.codes.findAuthorizationCode('live')).toBeDefined();
      expect((await storage.audit.listAuditEvents({ limit: 10 })).map((e) => e.id)).toEqual(['new']);
    });
  });
}
