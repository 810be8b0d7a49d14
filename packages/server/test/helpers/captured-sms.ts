import { expect } from 'vitest';
import type { PinCheckQueue } from '../../src/core/customers/pin.js';
import type { SmsMessage, SmsSender } from '../../src/core/sms/sms-sender.js';
import type { Storage } from '../../src/core/storage/storage.js';
import { build, type TestApp } from './build.js';
import { addCustomer, MOBILE } from './customer-flow.js';

/** An app in production whose SMS are captured, and a client of it. */
export interface SmsBench {
  readonly t: TestApp;
  readonly client: Awaited<ReturnType<TestApp['createClient']>>;
  /** The SMS handed to the gateway for `mobile` (default {@link MOBILE}), in order, once the answers' work after them is done. */
  sent(mobile?: string): Promise<SmsMessage[]>;
}

/**
 * An app in production (its default budgets, unless `env` sets others)
 * whose SMS are captured, with a client and, unless `customer` is false,
 * the customer of {@link MOBILE}: the budget tests of PIN resets and
 * registrations count what reaches the phone.
 */
export async function smsBench(
  options: { storage?: Storage; env?: Record<string, string>; customer?: boolean; pinChecks?: PinCheckQueue } = {},
): Promise<SmsBench> {
  const messages: SmsMessage[] = [];
  const sms: SmsSender = {
    async send(message) {
      messages.push(message);
    },
  };
  const t = await build({
    environment: 'production',
    sms,
    ...(options.storage ? { storage: options.storage } : {}),
    ...(options.env ? { env: options.env } : {}),
    ...(options.pinChecks ? { pinChecks: options.pinChecks } : {}),
  });
  const client = await t.createClient();
  if (options.customer !== false) await addCustomer(t);
  return {
    t,
    client,
    async sent(mobile = MOBILE) {
      await t.services.afterAnswer.idle();
      return messages.filter((message) => message.to === mobile);
    },
  };
}

/** The 6-digit code an SMS carries. */
export function codeOf(message: SmsMessage | undefined): string {
  const code = /\b(\d{6})\b/.exec(message?.body ?? '')?.[1];
  expect(code).toMatch(/^\d{6}$/);
  return code as string;
}
