import { setTimeout as delay } from 'node:timers/promises';

/**
 * Asks `probe` again and again (5 ms apart, real time) until it says the
 * change is there; fails when that takes longer than `ms` — by default one
 * second, the bound on a change reaching a running instance
 * (docs/operator-guide.md, "Changes reach every instance"). Returns how
 * long it took, ms.
 */
export async function changeReached(probe: () => Promise<boolean>, ms = 1000): Promise<number> {
  const started = performance.now();
  for (;;) {
    if (await probe()) return performance.now() - started;
    if (performance.now() - started > ms) throw new Error(`the change did not arrive within ${ms} ms`);
    await delay(5);
  }
}
