// Frozen once shipped: never change it and never import app code here.
import type { Kysely } from 'kysely';

/**
 * Why a journey was ended for its customer (docs/journey.md, "When a
 * sign-in ends"): `lock` (`customers lock`) or `pin_reset` (a PIN reset
 * in another journey); null for every other end (the customer cancelled,
 * the code was issued) and for journeys before this migration.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('authorization_requests').addColumn('ended_by', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('authorization_requests').dropColumn('ended_by').execute();
}
