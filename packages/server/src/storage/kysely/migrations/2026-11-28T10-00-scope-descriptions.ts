// Frozen once shipped: never change it and never import app code here.
import type { Kysely } from 'kysely';

/**
 * What each of a client's scopes means to a customer, in the operator's
 * words (`clients update --scope-description SCOPE=TEXT`): a JSON object
 * from scope to text, shown on the consent page; `{}` is none, which is
 * what every client made before has (their scopes get the pages' defaults).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('clients').addColumn('scope_descriptions', 'text', (c) => c.notNull().defaultTo('{}')).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('clients').dropColumn('scope_descriptions').execute();
}
