import { randomBytes } from 'node:crypto';
import type { Clock } from '../core/clock.js';
import type { SmsSender } from '../core/sms/sms-sender.js';
import type { SmsOutboxStore } from '../storage/ports.js';

/**
 * The sandbox's SMS "gateway": messages are kept in the database and can be
 * read at `GET /sandbox/messages?to=<E164>`. Never used in production.
 */
export function createOutboxSender(outbox: SmsOutboxStore, clock: Clock): SmsSender {
  return {
    async send(message) {
      await outbox.insertOutboxMessage({
        id: randomBytes(12).toString('base64url'),
        to: message.to,
        body: message.body,
        sentAt: clock.nowSeconds(),
      });
    },
  };
}
