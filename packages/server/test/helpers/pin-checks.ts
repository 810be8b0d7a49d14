import { onTestFinished } from 'vitest';
import { createPinCheckQueue, type PinCheckQueue, type PinCheckQueueOptions } from '../../src/core/customers/pin.js';

/**
 * The server's PIN-check queue, as `createPinCheckQueue(options)` makes it,
 * closed when the running test finishes: its PIN hash workers end with the
 * test instead of waiting, idle, for the whole file to end.
 */
export function testPinCheckQueue(options?: PinCheckQueueOptions): PinCheckQueue {
  const queue = createPinCheckQueue(options);
  onTestFinished(() => queue.close());
  return queue;
}
