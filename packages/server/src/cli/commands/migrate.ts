import type { MigrateCommandDeps } from '../../compose/command-deps.js';
import type { CommandResult } from './output.js';

/**
 * `migrate`: opening the database applied the pending migrations; this says
 * which, or that none was pending (docs/operator-guide.md, "The database").
 */
export function migrateCommand(deps: MigrateCommandDeps): CommandResult {
  const engine = deps.engine;
  const applied = [...deps.appliedMigrations];
  const text =
    applied.length === 0
      ? `database is up to date (${engine}): no migrations pending\n`
      : `applied ${applied.length} migration${applied.length === 1 ? '' : 's'} (${engine}), now up to date:\n${applied.map((name) => `  ${name}\n`).join('')}`;
  return { json: { migrated: true, engine, applied }, text };
}
