import type { JourneyDatabase, JourneyStores } from './deps.js';

/** Carries an outcome out of a transaction that must not commit. */
class Rollback<R> extends Error {
  constructor(readonly outcome: R) {
    super('rolled back');
  }
}

/**
 * Runs one step's writes in one transaction: all of them or none. `work`
 * may end the step early with `rollback(outcome)`, which undoes every write
 * made so far and returns `outcome`; anything thrown rolls back too and is
 * rethrown (a failing database becomes a 503 page, with nothing half-done).
 */
export async function atomically<T, R>(
  db: JourneyDatabase,
  work: (tx: JourneyStores, rollback: (outcome: R) => never) => Promise<T>,
): Promise<T | R> {
  try {
    return await db.transaction((tx) =>
      work(tx, (outcome) => {
        throw new Rollback(outcome);
      }),
    );
  } catch (error) {
    if (error instanceof Rollback) return error.outcome as R;
    throw error;
  }
}
