import { randomBytes, randomInt } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { SENDS_PER_IP, SENDS_PER_MOBILE } from '../../../src/core/limits/send-limiter.js';
import { createSendLimiter } from '../../../src/limits/send-limiter.js';

/** A mobile number and an address no earlier run used, so a shared Redis holds no budget spent on them. */
const freshMobile = () => `+63917${String(randomInt(0, 10_000_000)).padStart(7, '0')}`;
const freshIp = () => `198.51.${randomInt(0, 256)}.${randomInt(0, 256)}-${randomBytes(4).toString('hex')}`;

async function takeTimes(limiter: ReturnType<typeof createSendLimiter>, times: number, mobile: () => string, ip: () => string): Promise<void> {
  for (let i = 1; i <= times; i++) expect(await limiter.take(mobile(), ip()), `send #${i}`).toBeUndefined();
}

describe('send limits', () => {
  it('allow 5 sends per mobile in 15 minutes and 20 per address in an hour', () => {
    expect(SENDS_PER_MOBILE).toEqual({ points: 5, windowSeconds: 900 });
    expect(SENDS_PER_IP).toEqual({ points: 20, windowSeconds: 3600 });
  });
});

describe('send limiter (in memory)', () => {
  it('refuses the 6th send to one mobile within the window, whatever the address', async () => {
    const limiter = createSendLimiter();
    const mobile = freshMobile();
    await takeTimes(limiter, 5, () => mobile, freshIp);
    const refused = await limiter.take(mobile, freshIp());
    expect(refused?.retryAfterSeconds).toBeGreaterThan(0);
    expect(refused?.retryAfterSeconds).toBeLessThanOrEqual(900);
    // Other numbers are not affected.
    expect(await limiter.take(freshMobile(), freshIp())).toBeUndefined();
  });

  it('refuses the 21st send from one address within the window, whatever the mobile', async () => {
    const limiter = createSendLimiter();
    const ip = freshIp();
    await takeTimes(limiter, 20, freshMobile, () => ip);
    const refused = await limiter.take(freshMobile(), ip);
    expect(refused?.retryAfterSeconds).toBeGreaterThan(0);
    expect(refused?.retryAfterSeconds).toBeLessThanOrEqual(3600);
    expect(await limiter.take(freshMobile(), freshIp())).toBeUndefined();
  });

  it('does not spend the mobile budget on a send the address budget refused', async () => {
    const limiter = createSendLimiter();
    const ip = freshIp();
    await takeTimes(limiter, 20, freshMobile, () => ip);
    const mobile = freshMobile();
    for (let i = 0; i < 3; i++) expect(await limiter.take(mobile, ip)).toBeDefined();
    // The mobile still has its 5 sends from another address.
    await takeTimes(limiter, 5, () => mobile, freshIp);
    expect(await limiter.take(mobile, freshIp())).toBeDefined();
  });

  it('does not spend the address budget on a send the mobile budget refused', async () => {
    const limiter = createSendLimiter();
    const ip = freshIp();
    const mobile = freshMobile();
    await takeTimes(limiter, 5, () => mobile, () => ip);
    for (let i = 0; i < 10; i++) expect(await limiter.take(mobile, ip)).toBeDefined();
    // 15 of the address's 20 sends are left.
    await takeTimes(limiter, 15, freshMobile, () => ip);
    expect(await limiter.take(freshMobile(), ip)).toBeDefined();
  });

  it('keeps separate budgets in separate limiters (one per server without Redis)', async () => {
    const mobile = freshMobile();
    await takeTimes(createSendLimiter(), 5, () => mobile, freshIp);
    expect(await createSendLimiter().take(mobile, freshIp())).toBeUndefined();
  });
});

const redisUrl = process.env.CONNECT_TEST_REDIS_URL || undefined;
if (!redisUrl) {
  process.stderr.write('\nNOTICE: Redis suite "send limiter (Redis)" SKIPPED: set CONNECT_TEST_REDIS_URL to run it.\n\n');
}

describe.skipIf(!redisUrl)('send limiter (Redis)', () => {
  const clients: Redis[] = [];
  const usedKeys: string[] = [];
  const client = () => {
    const redis = new Redis(redisUrl ?? '', { maxRetriesPerRequest: 1 });
    clients.push(redis);
    return redis;
  };
  const mobileKey = (mobile: string) => (usedKeys.push(`connect:otp:mobile:${mobile}`), mobile);
  const ipKey = (ip: string) => (usedKeys.push(`connect:otp:ip:${ip}`), ip);

  afterAll(async () => {
    if (clients[0] && usedKeys.length > 0) await clients[0].del(...usedKeys);
    await Promise.all(clients.map((c) => c.quit()));
  });

  it('shares one mobile budget between two servers', async () => {
    const a = createSendLimiter(client());
    const b = createSendLimiter(client());
    const mobile = mobileKey(freshMobile());
    await takeTimes(a, 3, () => mobile, () => ipKey(freshIp()));
    await takeTimes(b, 2, () => mobile, () => ipKey(freshIp()));
    const refused = await a.take(mobile, ipKey(freshIp()));
    expect(refused?.retryAfterSeconds).toBeGreaterThan(0);
    expect(refused?.retryAfterSeconds).toBeLessThanOrEqual(900);
    expect(await b.take(mobile, ipKey(freshIp()))).toBeDefined();
  });

  it('shares one address budget between two servers', async () => {
    const a = createSendLimiter(client());
    const b = createSendLimiter(client());
    const ip = ipKey(freshIp());
    await takeTimes(a, 10, () => mobileKey(freshMobile()), () => ip);
    await takeTimes(b, 10, () => mobileKey(freshMobile()), () => ip);
    expect(await a.take(mobileKey(freshMobile()), ip)).toBeDefined();
    expect(await b.take(mobileKey(freshMobile()), ip)).toBeDefined();
  });

  it('gives the mobile back when the shared address budget refuses', async () => {
    const a = createSendLimiter(client());
    const b = createSendLimiter(client());
    const ip = ipKey(freshIp());
    await takeTimes(a, 20, () => mobileKey(freshMobile()), () => ip);
    const mobile = mobileKey(freshMobile());
    expect(await b.take(mobile, ip)).toBeDefined();
    await takeTimes(a, 5, () => mobile, () => ipKey(freshIp()));
  });
});
