import type { Clock } from '../core/clock.js';
import type { SmsSender } from '../core/sms/sms-sender.js';
import type { Config } from '../config/schema.js';
import type { SmsOutboxStore } from '../core/sms/outbox-store.js';
import { createConsoleSender } from './console-sender.js';
import { createOutboxSender } from './outbox-sender.js';
import { createWebhookSender } from './webhook-sender.js';

/** The SMS sender the configuration names (`CONNECT_SMS_SENDER`). */
export function createSmsSender(config: Config, storage: { outbox: SmsOutboxStore }, clock: Clock): SmsSender {
  switch (config.smsSender) {
    case 'webhook':
      return createWebhookSender({ url: config.smsWebhookUrl as string, secret: config.smsWebhookSecret as string });
    case 'console':
      return createConsoleSender();
    case 'outbox':
      return createOutboxSender(storage.outbox, clock);
  }
}
