import { describe, expect, it } from 'vitest';
import { fixedClock } from '../../../src/core/clock.js';
import { createConsoleSender } from '../../../src/sms/console-sender.js';
import { createOutboxSender } from '../../../src/sms/outbox-sender.js';
import { memoryStorage, T0 } from '../otp/otp-fixtures.js';

describe('outbox SMS sender', () => {
  it('keeps each message with the time of the clock, newest first', async () => {
    const storage = await memoryStorage();
    const clock = fixedClock(T0);
    const sender = createOutboxSender(storage.outbox, clock);
    await sender.send({ to: '+639171234567', body: 'first' });
    clock.advance(42);
    await sender.send({ to: '+639171234567', body: 'second' });
    await sender.send({ to: '+639179999999', body: 'someone else' });
    const messages = await storage.outbox.listOutboxMessages('+639171234567', 10);
    expect(messages.map(({ to, body, sentAt }) => ({ to, body, sentAt }))).toEqual([
      { to: '+639171234567', body: 'second', sentAt: T0 + 42 },
      { to: '+639171234567', body: 'first', sentAt: T0 },
    ]);
    expect(messages[0]?.id).not.toBe(messages[1]?.id);
  });
});

describe('console SMS sender', () => {
  it('writes the recipient and the whole message to the given writer', async () => {
    const written: string[] = [];
    await createConsoleSender((text) => written.push(text)).send({ to: '+639171234567', body: '123456 is your code' });
    expect(written).toHaveLength(1);
    expect(written[0]).toContain('+639171234567');
    expect(written[0]).toContain('123456 is your code');
  });
});
