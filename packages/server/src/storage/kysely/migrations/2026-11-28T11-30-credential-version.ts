// Frozen once shipped: never change it and never import app code here.
import type { Kysely } from 'kysely';

/**
 * A customer's credential version (docs/journey.md, "After a PIN reset"):
 * counts the changes of the customer's PIN and of its status (`customers
 * lock` / `customers unlock`). A known-device proof is made under the
 * version of its time, so a change ends every proof made before it.
 * Existing customers start at 0.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('customers')
    .addColumn('credential_version', 'integer', (column) => column.notNull().defaultTo(0))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('customers').dropColumn('credential_version').execute();
}
