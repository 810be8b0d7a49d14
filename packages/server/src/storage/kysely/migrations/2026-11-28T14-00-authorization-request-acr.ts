// Frozen once shipped: never change it and never import app code here.
import type { Kysely } from 'kysely';

/**
 * What a journey's sign-in must meet (docs/journey.md, "`acr_values` and
 * `max_age`"): `acr_values`, the request's known values, space-separated;
 * `max_age`, its seconds. Both null when the request named none, and for
 * journeys before this migration.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('authorization_requests').addColumn('acr_values', 'text').execute();
  await db.schema.alterTable('authorization_requests').addColumn('max_age', 'integer').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('authorization_requests').dropColumn('max_age').execute();
  await db.schema.alterTable('authorization_requests').dropColumn('acr_values').execute();
}
