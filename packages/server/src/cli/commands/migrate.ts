import type { Runtime } from '../../compose/runtime.js';
import type { CommandResult } from './output.js';

/**
 * `migrate`: opening the runtime applied the pending migrations; this says
 * which, or that none was pending (docs/operator-guide.md, "The database").
 */
export function migrateCommand(runtime: Runtime): CommandResult {
  const engine = runtime.storage.engine;
  const applied = [...runtime.appliedMigrations];
  const text =
    applied.length === 0
      ? `database is up to date (${engine}): no migrations pending\n`
      : `applied ${applied.length} migration${applied.length === 1 ? '' : 's'} (${engine}), now up to date:\n${applied.map((name) => `  ${name}\n`).join('')}`;
  return { json: { migrated: true, engine, applied }, text };
}
