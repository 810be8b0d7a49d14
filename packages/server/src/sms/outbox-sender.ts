import { randomBytes } from 'node:crypto';
import type { Clock } from '../core/clock.js';
import { SmsDeliveryFailed, type SmsSender } from '../core/sms/sms-sender.js';
import type { SmsOutboxStore } from '../core/sms/outbox-store.js';

/**
 * The sandbox's SMS "gateway": messages are kept in the database and can be
 * read at `GET /sandbox/messages?to=<E164>`. Never used in production.
 */
export function createOutboxSender(outbox: SmsOutboxStore, clock: Clock): SmsSender {
  return {
    async send(message, options) {
      // The outbox is this gateway: nothing is kept for a request already answered.
      if (options?.signal?.aborted) throw new SmsDeliveryFailed('request already answered');
      await outbox.insertOutboxMessage({
        id: outboxMessageId(),
        to: message.to,
        body: message.body,
        sentAt: clock.nowSeconds(),
      });
    },
  };
}

/**
 * The outbox lists messages newest first by `sentAt` (whole seconds), then by
 * ID. So that two messages sent within one second still come in the order
 * they were sent, an ID starts with this process's monotonic time (fixed-width
 * hex, which sorts the same under any collation), then random bytes.
 */
function outboxMessageId(): string {
  return `${process.hrtime.bigint().toString(16).padStart(16, '0')}${randomBytes(6).toString('hex')}`;
}
