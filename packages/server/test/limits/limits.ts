import { randomBytes, randomInt } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import { parseClientAddress, type ClientAddress } from '../../src/core/client-address.js';
import { hashLimitKey, LIMIT_KEY_PREFIXES, type LimitBudgets, type Limits } from '../../src/limits/create-limits.js';

/**
 * Budgets for the tests: not the defaults, so a test passes only when the
 * limits take their budgets from the configuration.
 */
export const BUDGETS: LimitBudgets = { smsLimitPerMobile: 5, smsLimitPerAddress: 12, pinLimitPerAddress: 5, journeyLimitPerAddress: 7 };

/** The journey budget of {@link BUDGETS}. */
const JOURNEYS = BUDGETS.journeyLimitPerAddress ?? 0;

/** Takes `times` journey starts, each expected to go ahead. */
export async function startTimes(limits: Limits, times: number, address: ClientAddress): Promise<void> {
  for (let i = 1; i <= times; i++) expect(await limits.journeyStarts.take(address), `journey #${i}`).toBeUndefined();
}

/** One test's view of where the counters live. */
export interface LimitsFixture {
  /** The limits as one more server would build them, on the same counters (its own connection where it has one). */
  instance(budgets?: LimitBudgets, keySecret?: Uint8Array): Promise<Limits>;
  /** The count stored under a counter's full key (`prefix:hash`), or `undefined`. */
  storedCount(key: string): Promise<number | undefined>;
  /** Moves the clock of the database counters; absent for Redis, which keeps its own. */
  advanceMs?(ms: number): void;
  /** Ends the window of the counter under a full key at once, as its expiry would (Redis, whose clock the tests cannot move). */
  expireKey?(key: string): Promise<void>;
}

/** Every mobile number and address the tests of this process used, so a shared Redis can be cleaned up. */
export const usedKeys = new Set<string>();
const used = (value: string) => (usedKeys.add(value), value);

/** A mobile number no earlier run used, so a shared Redis holds no budget spent on it. */
export const freshMobile = (): string => used(`+63917${String(randomInt(0, 10_000_000)).padStart(7, '0')}`);
/** A client address no earlier run used: one of 2^32 /64 networks of the documentation prefix, parsed as the edge parses it. */
export const freshAddress = (): ClientAddress => {
  const address = parseClientAddress(`2001:db8:${randomBytes(4).toString('hex').replace(/(....)(....)/, '$1:$2')}::1`);
  if (!address) throw new Error('freshAddress: not an address');
  used(address.bucket);
  return address;
};

/** Takes `times` sends, each expected to go ahead. */
export async function sendTimes(limits: Limits, times: number, mobile: () => string, address: () => ClientAddress): Promise<void> {
  for (let i = 1; i <= times; i++) expect(await limits.sends.take(mobile(), address()), `send #${i}`).toBeUndefined();
}

/** Takes `times` PIN attempts, each expected to go ahead. */
export async function attemptTimes(limits: Limits, times: number, address: ClientAddress): Promise<void> {
  for (let i = 1; i <= times; i++) expect(await limits.pinAttempts.take(address), `attempt #${i}`).toBeUndefined();
}

/** Runs `count` calls of `work` at once. */
export function concurrently<R>(count: number, work: (index: number) => Promise<R>): Promise<R[]> {
  return Promise.all(Array.from({ length: count }, (_, index) => work(index)));
}

/**
 * The behaviour of the limits, whatever keeps the counters: each backend's
 * test file calls this with a fixture factory run before every test.
 */
export function describeLimits(backend: string, setup: () => Promise<LimitsFixture>, options: { databaseClock: boolean }): void {
  describe(`limits: ${backend}`, () => {
    let fixture: LimitsFixture;
    let limits: Limits;
    beforeEach(async () => {
      fixture = await setup();
      limits = await fixture.instance();
    });

    describe('one-time-PIN sends', () => {
      it('refuses the send past the mobile budget within 15 minutes, whatever the address', async () => {
        const mobile = freshMobile();
        await sendTimes(limits, BUDGETS.smsLimitPerMobile, () => mobile, freshAddress);
        const refused = await limits.sends.take(mobile, freshAddress());
        expect(refused?.retryAfterSeconds).toBeGreaterThan(890);
        expect(refused?.retryAfterSeconds).toBeLessThanOrEqual(900);
        expect(await limits.sends.take(freshMobile(), freshAddress())).toBeUndefined();
      });

      it('refuses the send past the address budget within an hour, whatever the mobile', async () => {
        const address = freshAddress();
        await sendTimes(limits, BUDGETS.smsLimitPerAddress, freshMobile, () => address);
        const refused = await limits.sends.take(freshMobile(), address);
        expect(refused?.retryAfterSeconds).toBeGreaterThan(3590);
        expect(refused?.retryAfterSeconds).toBeLessThanOrEqual(3600);
        expect(await limits.sends.take(freshMobile(), freshAddress())).toBeUndefined();
      });

      it('does not spend the mobile budget on a send the address budget refused', async () => {
        const address = freshAddress();
        await sendTimes(limits, BUDGETS.smsLimitPerAddress, freshMobile, () => address);
        const mobile = freshMobile();
        for (let i = 0; i < 3; i++) expect(await limits.sends.take(mobile, address)).toBeDefined();
        await sendTimes(limits, BUDGETS.smsLimitPerMobile, () => mobile, freshAddress);
        expect(await limits.sends.take(mobile, freshAddress())).toBeDefined();
      });

      it('does not spend the address budget on a send the mobile budget refused', async () => {
        const address = freshAddress();
        const mobile = freshMobile();
        await sendTimes(limits, BUDGETS.smsLimitPerMobile, () => mobile, () => address);
        for (let i = 0; i < 10; i++) expect(await limits.sends.take(mobile, address)).toBeDefined();
        await sendTimes(limits, BUDGETS.smsLimitPerAddress - BUDGETS.smsLimitPerMobile, freshMobile, () => address);
        expect(await limits.sends.take(freshMobile(), address)).toBeDefined();
      });

      it('lets exactly the budget through when many sends to one mobile arrive at once', async () => {
        const mobile = freshMobile();
        const results = await concurrently(50, () => limits.sends.take(mobile, freshAddress()));
        expect(results.filter((r) => r === undefined)).toHaveLength(BUDGETS.smsLimitPerMobile);
      });

      it('shares the budgets between servers on the same counters', async () => {
        const other = await fixture.instance();
        const mobile = freshMobile();
        await sendTimes(limits, 3, () => mobile, freshAddress);
        await sendTimes(other, BUDGETS.smsLimitPerMobile - 3, () => mobile, freshAddress);
        expect(await limits.sends.take(mobile, freshAddress())).toBeDefined();
        expect(await other.sends.take(mobile, freshAddress())).toBeDefined();
      });

      it('stores the mobile number and the address only hashed', async () => {
        const mobile = freshMobile();
        const address = freshAddress();
        await sendTimes(limits, 2, () => mobile, () => address);
        expect(await fixture.storedCount(`${LIMIT_KEY_PREFIXES.smsPerMobile}:${hashLimitKey(mobile)}`)).toBe(2);
        expect(await fixture.storedCount(`${LIMIT_KEY_PREFIXES.smsPerAddress}:${hashLimitKey(address.bucket)}`)).toBe(2);
        expect(await fixture.storedCount(`${LIMIT_KEY_PREFIXES.smsPerMobile}:${mobile}`)).toBeUndefined();
        expect(await fixture.storedCount(`${LIMIT_KEY_PREFIXES.smsPerAddress}:${address}`)).toBeUndefined();
        expect(hashLimitKey(mobile)).toMatch(/^[A-Za-z0-9_-]{43}$/);
      });
    });

    describe('the global send budget', () => {
      // A key of this test's own, so that no other run on a shared Redis spends the same global budget.
      let secret: Uint8Array;
      const GLOBAL = { ...BUDGETS, smsLimitGlobal: 7 };
      beforeEach(() => {
        secret = randomBytes(32);
      });

      it('refuses every send past the whole deployment\'s budget within an hour, whatever the mobile and the address', async () => {
        const global = await fixture.instance(GLOBAL, secret);
        await sendTimes(global, GLOBAL.smsLimitGlobal, freshMobile, freshAddress);
        const refused = await global.sends.take(freshMobile(), freshAddress());
        expect(refused?.budget).toBe('global');
        expect(refused?.retryAfterSeconds).toBeGreaterThan(3590);
        expect(refused?.retryAfterSeconds).toBeLessThanOrEqual(3600);
      });

      it('names the budget that refused: the mobile\'s and the address\'s before the global one', async () => {
        const global = await fixture.instance(GLOBAL, secret);
        const mobile = freshMobile();
        await sendTimes(global, BUDGETS.smsLimitPerMobile, () => mobile, freshAddress);
        expect(await global.sends.take(mobile, freshAddress())).toMatchObject({ budget: 'mobile' });
        const address = freshAddress();
        await sendTimes(global, 2, freshMobile, () => address);
        expect(await global.sends.take(freshMobile(), freshAddress())).toMatchObject({ budget: 'global' });
      });

      it('a send the global budget refused spends neither the mobile\'s nor the address\'s budget', async () => {
        const global = await fixture.instance(GLOBAL, secret);
        await sendTimes(global, GLOBAL.smsLimitGlobal, freshMobile, freshAddress);
        const mobile = freshMobile();
        const address = freshAddress();
        for (let i = 0; i < 20; i++) expect(await global.sends.take(mobile, address)).toMatchObject({ budget: 'global' });
        // The same counters without a global budget: the mobile and the address have all of theirs.
        const unlimited = await fixture.instance(BUDGETS, secret);
        await sendTimes(unlimited, BUDGETS.smsLimitPerMobile, () => mobile, () => address);
      });

      it('is one budget for every server on the same counters, also when sends arrive at once', async () => {
        const [one, two] = [await fixture.instance(GLOBAL, secret), await fixture.instance(GLOBAL, secret)];
        const results = await concurrently(30, (i) => (i % 2 === 0 ? one : two).sends.take(freshMobile(), freshAddress()));
        expect(results.filter((r) => r === undefined)).toHaveLength(GLOBAL.smsLimitGlobal);
        expect(results.filter((r) => r?.budget === 'global')).toHaveLength(30 - GLOBAL.smsLimitGlobal);
      });

      it('without a global budget there is none', async () => {
        await sendTimes(await fixture.instance(BUDGETS, secret), 40, freshMobile, freshAddress);
      });

      it('a request that sends nothing never spends it, but is refused alike once sends spent it', async () => {
        const global = await fixture.instance(GLOBAL, secret);
        // Far more than the whole budget of requests that send nothing, each from its own address.
        for (let i = 0; i < 3 * GLOBAL.smsLimitGlobal; i++) expect(await global.resetSends.take(freshMobile(), freshAddress(), { sendsNothing: true })).toBeUndefined();
        // Every send of the budget still goes.
        await sendTimes(global, GLOBAL.smsLimitGlobal, freshMobile, freshAddress);
        expect(await global.sends.take(freshMobile(), freshAddress())).toMatchObject({ budget: 'global' });
        expect(await global.resetSends.take(freshMobile(), freshAddress(), { sendsNothing: true })).toMatchObject({ budget: 'global' });
      });
    });

    describe('PIN reset sends and wrong reset codes', () => {
      it('3 reset codes per mobile from one address, and 3 per mobile over every address (unsolicited); other mobiles go on', async () => {
        const mobile = freshMobile();
        const stranger = freshAddress();
        for (let i = 0; i < 3; i++) expect(await limits.resetSends.take(mobile, stranger), `reset #${i + 1}`).toBeUndefined();
        const refused = await limits.resetSends.take(mobile, stranger);
        expect(refused?.budget).toBe('requester');
        expect(refused?.retryAfterSeconds).toBeGreaterThan(3590);
        // The same address may still reach other mobiles.
        expect(await limits.resetSends.take(freshMobile(), stranger)).toBeUndefined();
        // Another address (another network of the stranger, or the owner on a new device) finds the mobile's unsolicited 3 spent.
        expect(await limits.resetSends.take(mobile, freshAddress())).toMatchObject({ budget: 'unsolicited' });
      });

      it('a known device of the customer has its own 3 an hour, which no other request spends, nor spends theirs', async () => {
        const mobile = freshMobile();
        const device = { profileId: `p-${mobile}`, deviceId: 'd'.repeat(22) };
        // Strangers on 3 networks spend the mobile's unsolicited budget.
        for (let i = 0; i < 3; i++) expect(await limits.resetSends.take(mobile, freshAddress())).toBeUndefined();
        expect(await limits.resetSends.take(mobile, freshAddress())).toMatchObject({ budget: 'unsolicited' });
        // The known device, from any address, still gets its 3: nothing the strangers spent is its.
        for (let i = 0; i < 3; i++) expect(await limits.resetSends.take(mobile, freshAddress(), { knownDevice: device })).toBeUndefined();
        expect(await limits.resetSends.take(mobile, freshAddress(), { knownDevice: device })).toMatchObject({ budget: 'device' });
        // Another customer's known device: 3 an hour, then refused by its own device budget, which
        // took nothing of that mobile's unsolicited one: strangers still get their 3.
        const other = freshMobile();
        const owner = { profileId: `p-${other}`, deviceId: 'e'.repeat(22) };
        for (let i = 0; i < 3; i++) expect(await limits.resetSends.take(other, freshAddress(), { knownDevice: owner })).toBeUndefined();
        expect(await limits.resetSends.take(other, freshAddress(), { knownDevice: owner })).toMatchObject({ budget: 'device' });
        for (let i = 0; i < 3; i++) expect(await limits.resetSends.take(other, freshAddress())).toBeUndefined();
        expect(await limits.resetSends.take(other, freshAddress())).toMatchObject({ budget: 'unsolicited' });
      });

      it("everything strangers spend leaves the known devices' per-mobile budget whole; the customer's devices share it", async () => {
        const mobile = freshMobile();
        const stranger = freshAddress();
        for (let i = 0; i < 3; i++) expect(await limits.resetSends.take(mobile, stranger)).toBeUndefined();
        for (let i = 0; i < 20; i++) expect(await limits.resetSends.take(mobile, stranger)).toMatchObject({ budget: 'requester' });
        for (let i = 0; i < 20; i++) expect(await limits.resetSends.take(mobile, freshAddress())).toMatchObject({ budget: 'unsolicited' });
        // Two known devices of the customer: CONNECT_SMS_LIMIT_PER_MOBILE (5) between them, 3 each at most.
        const phone = { knownDevice: { profileId: `p-${mobile}`, deviceId: 'k'.repeat(22) } };
        const laptop = { knownDevice: { profileId: `p-${mobile}`, deviceId: 'l'.repeat(22) } };
        for (let i = 0; i < 3; i++) expect(await limits.resetSends.take(mobile, freshAddress(), phone)).toBeUndefined();
        for (let i = 0; i < 2; i++) expect(await limits.resetSends.take(mobile, freshAddress(), laptop)).toBeUndefined();
        expect(await limits.resetSends.take(mobile, freshAddress(), laptop)).toMatchObject({ budget: 'mobile' });
      });

      it("a registration's codes (unsolicited) share the reset's requester and unsolicited budgets, then take the login's; a login's take neither", async () => {
        const mobile = freshMobile();
        const stranger = freshAddress();
        const unsolicited = { unsolicited: true };
        // Two resets of a number without an account spend 2 of its unsolicited 3, though nothing was sent.
        for (let i = 0; i < 2; i++) expect(await limits.resetSends.take(mobile, stranger, { sendsNothing: true })).toBeUndefined();
        expect(await limits.sends.take(mobile, stranger, unsolicited)).toBeUndefined();
        expect(await limits.sends.take(mobile, stranger, unsolicited)).toMatchObject({ budget: 'requester' });
        expect(await limits.sends.take(mobile, freshAddress(), unsolicited)).toMatchObject({ budget: 'unsolicited' });
        // A login's codes take the login's per-mobile budget only (5 per 15 minutes, of which the registration took 1).
        for (let i = 0; i < 4; i++) expect(await limits.sends.take(mobile, freshAddress())).toBeUndefined();
        expect(await limits.sends.take(mobile, freshAddress())).toMatchObject({ budget: 'mobile' });
      });

      it('giveBack returns what a take with the same arguments took, and nothing it only checked', async () => {
        // A key of this test's own, so that no other run on a shared Redis spends the same global budget.
        const global = await fixture.instance({ ...BUDGETS, smsLimitGlobal: 2 }, randomBytes(32));
        const mobile = freshMobile();
        const stranger = freshAddress();
        const unsolicited = { unsolicited: true };
        // Taken and given back 10 times: the budgets (3 from this address, 2 for the deployment) are whole.
        for (let i = 0; i < 10; i++) {
          expect(await global.sends.take(mobile, stranger, unsolicited)).toBeUndefined();
          await global.sends.giveBack(mobile, stranger, unsolicited);
        }
        for (let i = 0; i < 10; i++) {
          expect(await global.resetSends.take(mobile, stranger, { sendsNothing: true })).toBeUndefined();
          await global.resetSends.giveBack(mobile, stranger, { sendsNothing: true });
        }
        await sendTimes(global, 2, () => mobile, () => stranger);
        expect(await global.sends.take(mobile, stranger)).toMatchObject({ budget: 'global' });
        // A giveBack of a request that only checked the global budget leaves it spent.
        await global.resetSends.giveBack(freshMobile(), freshAddress(), { sendsNothing: true });
        expect(await global.sends.take(freshMobile(), freshAddress())).toMatchObject({ budget: 'global' });
      });

      it('wrong reset codes count per address, never per mobile: another address has its own 10', async () => {
        const stranger = freshAddress();
        // An entry given back (it was right, or never compared) does not count.
        expect(await limits.resetOtpEntries.take(stranger)).toBeUndefined();
        await limits.resetOtpEntries.giveBack(stranger);
        for (let i = 0; i < 10; i++) expect(await limits.resetOtpEntries.take(stranger)).toBeUndefined();
        expect((await limits.resetOtpEntries.take(stranger))?.retryAfterSeconds).toBeGreaterThan(3590);
        expect(await limits.resetOtpEntries.take(freshAddress())).toBeUndefined();
        // The login's wrong entries per mobile are another budget.
        expect(await limits.otpEntries.spent(stranger.bucket)).toBeUndefined();
      });
    });

    describe('PIN attempts', () => {
      it('refuses the attempt past the address budget within an hour; other addresses go on', async () => {
        const address = freshAddress();
        await attemptTimes(limits, BUDGETS.pinLimitPerAddress, address);
        const refused = await limits.pinAttempts.take(address);
        expect(refused?.retryAfterSeconds).toBeGreaterThan(3590);
        expect(refused?.retryAfterSeconds).toBeLessThanOrEqual(3600);
        expect(await limits.pinAttempts.take(freshAddress())).toBeUndefined();
      });

      it('gives back one attempt for a check that succeeded', async () => {
        const address = freshAddress();
        await attemptTimes(limits, BUDGETS.pinLimitPerAddress, address);
        await limits.pinAttempts.giveBack(address);
        expect(await limits.pinAttempts.take(address)).toBeUndefined();
        expect(await limits.pinAttempts.take(address)).toBeDefined();
      });

      it('counts only failures: checks that succeed never run out', async () => {
        const address = freshAddress();
        for (let i = 0; i < 3 * BUDGETS.pinLimitPerAddress; i++) {
          expect(await limits.pinAttempts.take(address), `check #${i + 1}`).toBeUndefined();
          await limits.pinAttempts.giveBack(address);
        }
        expect(await fixture.storedCount(`${LIMIT_KEY_PREFIXES.pinPerAddress}:${hashLimitKey(address.bucket)}`)).toBe(0);
      });

      it('takes nothing for a refused attempt', async () => {
        const address = freshAddress();
        await attemptTimes(limits, BUDGETS.pinLimitPerAddress, address);
        for (let i = 0; i < 10; i++) expect(await limits.pinAttempts.take(address)).toBeDefined();
        // One check of the budget succeeded after all: exactly one attempt is free again.
        await limits.pinAttempts.giveBack(address);
        expect(await limits.pinAttempts.take(address)).toBeUndefined();
        expect(await limits.pinAttempts.take(address)).toBeDefined();
      });

      it('lets exactly the budget through when 50 attempts arrive at once', async () => {
        const address = freshAddress();
        const results = await concurrently(50, () => limits.pinAttempts.take(address));
        expect(results.filter((r) => r === undefined)).toHaveLength(BUDGETS.pinLimitPerAddress);
        expect(results.filter((r) => r !== undefined)).toHaveLength(50 - BUDGETS.pinLimitPerAddress);
      });

      it('lets exactly the budget through when two servers take at once', async () => {
        const other = await fixture.instance();
        const address = freshAddress();
        const results = await concurrently(50, (i) => (i % 2 ? other : limits).pinAttempts.take(address));
        expect(results.filter((r) => r === undefined)).toHaveLength(BUDGETS.pinLimitPerAddress);
      });

      it('stores the address only hashed', async () => {
        const address = freshAddress();
        await attemptTimes(limits, 1, address);
        expect(await fixture.storedCount(`${LIMIT_KEY_PREFIXES.pinPerAddress}:${hashLimitKey(address.bucket)}`)).toBe(1);
        expect(await fixture.storedCount(`${LIMIT_KEY_PREFIXES.pinPerAddress}:${address}`)).toBeUndefined();
      });
    });

    describe('journey starts (CONNECT_JOURNEY_LIMIT_PER_ADDRESS)', () => {
      it('lets the budget through, the last one included, and refuses the next within an hour; another address has its own', async () => {
        const address = freshAddress();
        await startTimes(limits, JOURNEYS - 1, address);
        expect(await limits.journeyStarts.take(address), 'the last of the budget').toBeUndefined();
        const refused = await limits.journeyStarts.take(address);
        expect(refused?.retryAfterSeconds).toBeGreaterThan(3590);
        expect(refused?.retryAfterSeconds).toBeLessThanOrEqual(3600);
        expect(await limits.journeyStarts.take(address)).toBeDefined();
        await startTimes(limits, JOURNEYS, freshAddress());
      });

      it('refused starts take nothing; the PIN and SMS budgets of the address are untouched', async () => {
        const address = freshAddress();
        await startTimes(limits, JOURNEYS, address);
        for (let i = 0; i < 10; i++) expect(await limits.journeyStarts.take(address)).toBeDefined();
        expect(await fixture.storedCount(`${LIMIT_KEY_PREFIXES.journeyPerAddress}:${hashLimitKey(address.bucket)}`)).toBe(JOURNEYS);
        await attemptTimes(limits, BUDGETS.pinLimitPerAddress, address);
        await sendTimes(limits, 1, freshMobile, () => address);
      });

      it('one budget for two servers on the same counters, when starts arrive at once', async () => {
        const other = await fixture.instance();
        const address = freshAddress();
        const results = await concurrently(40, (i) => (i % 2 ? other : limits).journeyStarts.take(address));
        expect(results.filter((r) => r === undefined)).toHaveLength(JOURNEYS);
        expect(await other.journeyStarts.take(freshAddress())).toBeUndefined();
      });

      it('without a journey budget there is none', async () => {
        const unlimited = await fixture.instance({ ...BUDGETS, journeyLimitPerAddress: undefined });
        await startTimes(unlimited, 3 * JOURNEYS, freshAddress());
      });
    });

    it('a point given back after its window ended gives the next window nothing: it holds its budget exactly', async () => {
      const address = freshAddress();
      const key = `${LIMIT_KEY_PREFIXES.pinPerAddress}:${hashLimitKey(address.bucket)}`;
      expect(await limits.pinAttempts.take(address)).toBeUndefined();
      // The window ends between a take and its give-back.
      if (fixture.advanceMs) fixture.advanceMs(60 * 60_000);
      else if (fixture.expireKey) await fixture.expireKey(key);
      else throw new Error('the fixture can end no window');
      await limits.pinAttempts.giveBack(address);
      expect(await fixture.storedCount(key)).toBeUndefined();
      await attemptTimes(limits, BUDGETS.pinLimitPerAddress, address);
      expect(await limits.pinAttempts.take(address)).toBeDefined();
    });

    // Redis keeps its own clock; the database counters run on the limiter's.
    describe.runIf(options.databaseClock)('windows', () => {
      it('the journey budget: refused at one millisecond before the hour ends, open again at the hour', async () => {
        if (!fixture.advanceMs) throw new Error('the fixture has no clock');
        const address = freshAddress();
        await startTimes(limits, JOURNEYS, address);
        fixture.advanceMs(60 * 60_000 - 1);
        expect(await limits.journeyStarts.take(address)).toEqual({ retryAfterSeconds: 1 });
        fixture.advanceMs(1);
        await startTimes(limits, JOURNEYS, address);
        expect(await limits.journeyStarts.take(address)).toBeDefined();
      });

      it('opens a new window once the old one has ended', async () => {
        const advanceMs = (ms: number) => {
          if (!fixture.advanceMs) throw new Error('the fixture has no clock');
          fixture.advanceMs(ms);
        };
        const mobile = freshMobile();
        const address = freshAddress();
        await attemptTimes(limits, BUDGETS.pinLimitPerAddress, address);
        await sendTimes(limits, BUDGETS.smsLimitPerMobile, () => mobile, freshAddress);
        advanceMs(15 * 60_000 - 1);
        expect(await limits.sends.take(mobile, freshAddress())).toEqual({ budget: 'mobile', retryAfterSeconds: 1 });
        advanceMs(1);
        await sendTimes(limits, BUDGETS.smsLimitPerMobile, () => mobile, freshAddress);
        expect(await limits.pinAttempts.take(address)).toBeDefined();
        advanceMs(45 * 60_000);
        await attemptTimes(limits, BUDGETS.pinLimitPerAddress, address);
        expect(await limits.pinAttempts.take(address)).toBeDefined();
      });
    });
  });
}
