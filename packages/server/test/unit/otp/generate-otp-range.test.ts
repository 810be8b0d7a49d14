import { describe, expect, it, vi } from 'vitest';

// The code's range is exactly what randomInt is asked for: pin the call.
const randomInt = vi.hoisted(() => vi.fn<(min: number, max: number) => number>());
vi.mock('node:crypto', async (importOriginal) => ({ ...(await importOriginal<typeof import('node:crypto')>()), randomInt }));

const { generateOtp } = await import('../../../src/core/otp/otp-hasher.js');

describe('generateOtp range', () => {
  it('asks the CSPRNG for an integer in [0, 1000000) and keeps leading zeros', () => {
    for (const [drawn, code] of [
      [0, '000000'],
      [7, '000007'],
      [42_195, '042195'],
      [100_000, '100000'],
      [999_999, '999999'],
    ] as const) {
      randomInt.mockReturnValueOnce(drawn);
      expect(generateOtp()).toBe(code);
    }
    expect(randomInt).toHaveBeenCalledTimes(5);
    for (const call of randomInt.mock.calls) expect(call).toEqual([0, 1_000_000]);
  });
});
