// Frozen once shipped: never change it and never import app code here.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  // When a key starts signing (epoch seconds). A rotated-in key is published
  // first and signs only from here on; every key stored before signed from
  // its creation.
  await db.schema.alterTable('signing_keys').addColumn('activates_at', 'bigint', (c) => c.notNull().defaultTo(0)).execute();
  await sql`update signing_keys set activates_at = created_at`.execute(db);

  // 1, 2, 3, ... per use, in the order the keys were made. Unique, so two
  // rotations (or two instances creating the first key) at the same moment
  // cannot both add a key: the second one fails.
  await db.schema.alterTable('signing_keys').addColumn('generation', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await sql`
    update signing_keys set generation = (
      select count(*) from signing_keys as earlier
      where earlier."use" = signing_keys."use"
        and (earlier.created_at < signing_keys.created_at
          or (earlier.created_at = signing_keys.created_at and earlier.kid <= signing_keys.kid))
    )`.execute(db);
  await db.schema.createIndex('signing_keys_use_generation').on('signing_keys').columns(['use', 'generation']).unique().execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('signing_keys_use_generation').execute();
  await db.schema.alterTable('signing_keys').dropColumn('generation').execute();
  await db.schema.alterTable('signing_keys').dropColumn('activates_at').execute();
}
