import type { SmsSender } from '../core/sms/sms-sender.js';

/**
 * For local development in the sandbox: prints each SMS to the terminal
 * (stderr), outside the JSON logs. Refused in production.
 */
export function createConsoleSender(write: (text: string) => void = (text) => void process.stderr.write(text)): SmsSender {
  return {
    async send(message) {
      write(`\n[sandbox SMS to ${message.to}] ${message.body}\n\n`);
    },
  };
}
