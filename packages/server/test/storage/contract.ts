import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { describeAuditEventsContract } from './contract/audit-events.js';
import { describeAuthorizationCodesContract } from './contract/authorization-codes.js';
import { describeAuthorizationRequestsContract } from './contract/authorization-requests.js';
import { describeClientsContract } from './contract/clients.js';
import { describeConsentsContract } from './contract/consents.js';
import { describeCustomerSessionsContract } from './contract/customer-sessions.js';
import { describeCustomersContract } from './contract/customers.js';
import type { StorageFactory, StorageUnderTest } from './contract/fixtures.js';
import { describeIdempotentRequestsContract } from './contract/idempotent-requests.js';
import { describeOtpChallengesContract } from './contract/otp-challenges.js';
import { describePasskeysContract } from './contract/passkeys.js';
import { describePurgeContract } from './contract/purge.js';
import { describePushedRequestsContract } from './contract/pushed-requests.js';
import { describeRateLimitCountersContract } from './contract/rate-limit-counters.js';
import { describeSignInsContract } from './contract/sign-ins.js';
import { describeSigningKeysContract } from './contract/signing-keys.js';
import { describeSmsOutboxContract } from './contract/sms-outbox.js';
import { describeTokenSessionsContract } from './contract/token-sessions.js';
import { describeTransactionsContract } from './contract/transactions.js';
import { describeUsedJtisContract } from './contract/used-jtis.js';
import { describeMasterKeysContract } from './contract/master-keys.js';

export type { StorageFactory } from './contract/fixtures.js';

/** Each store's part of the contract, in the order they run. */
const STORES: readonly ((subject: StorageUnderTest) => void)[] = [
  describeClientsContract,
  describeSigningKeysContract,
  describeCustomersContract,
  describeAuthorizationRequestsContract,
  describeOtpChallengesContract,
  describeSignInsContract,
  describeCustomerSessionsContract,
  describeConsentsContract,
  describeAuthorizationCodesContract,
  describeTokenSessionsContract,
  describeIdempotentRequestsContract,
  describeSmsOutboxContract,
  describeRateLimitCountersContract,
  describeAuditEventsContract,
  describePasskeysContract,
  describeUsedJtisContract,
  describeMasterKeysContract,
  describePushedRequestsContract,
  describePurgeContract,
  describeTransactionsContract,
];

/**
 * The storage contract: every engine must behave exactly like this
 * (`core/storage/storage.ts` documents it). Each engine's test file calls it.
 */
export function describeStorageContract(engine: string, factory: StorageFactory): void {
  describe(`storage contract: ${engine}`, () => {
    const subject = {} as StorageUnderTest;

    beforeEach(async () => {
      subject.storage = await factory.open();
      await subject.storage.migrate();
    });

    afterEach(async () => {
      await factory.dispose?.(subject.storage);
      await subject.storage.close();
    });

    it('migrates idempotently and answers ping', async () => {
      const { storage } = subject;
      expect(await storage.migrate()).toEqual([]);
      await expect(storage.ping()).resolves.toBeUndefined();
    });

    for (const describeStore of STORES) describeStore(subject);
  });
}
