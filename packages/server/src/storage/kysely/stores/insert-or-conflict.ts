import { Conflict } from '../../../core/storage-errors.js';

/**
 * Runs an insert and turns a unique-key violation of either engine into
 * `Conflict`, so callers never see driver errors.
 */
export async function insertOrConflict(query: { execute(): Promise<unknown> }, message: string): Promise<void> {
  try {
    await query.execute();
  } catch (error) {
    if (isUniqueViolation(error)) throw new Conflict(message, { cause: error });
    throw error;
  }
}

/**
 * A unique-key violation of either engine: PostgreSQL 23505
 * unique_violation, SQLite's SQLITE_CONSTRAINT_PRIMARYKEY or _UNIQUE.
 * `translate-driver-errors.ts` lets these through for `insertOrConflict`.
 */
export function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === 'SQLITE_CONSTRAINT_UNIQUE';
}
