// Frozen once shipped: never change it and never import app code here.
import type { Kysely } from 'kysely';

/**
 * The language a journey's `ui_locales` chose (`en`, `fil`), kept for every
 * page of the journey; null when the browser's `Accept-Language` decides
 * (docs/hosted-login.md, "Languages").
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('authorization_requests').addColumn('ui_locale', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('authorization_requests').dropColumn('ui_locale').execute();
}
