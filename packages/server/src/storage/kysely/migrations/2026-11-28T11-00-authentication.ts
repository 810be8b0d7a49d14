// Frozen once shipped: never change it and never import app code here.
import { sql, type Kysely } from 'kysely';

const TABLES = ['customer_sessions', 'authorization_codes', 'token_sessions'] as const;

/**
 * How the customer authenticated (docs/tokens.md, "How the customer signed
 * in"): `acr`, `amr` (RFC 8176 values, space-separated) and `auth_time`
 * (epoch seconds) of the sign-in, on the customer session it started, the
 * codes issued from it and their token sessions.
 *
 * Existing customer sessions were each started by a completed PIN + SMS
 * sign-in at their `created_at` (the only way one was ever started), so
 * they get exactly that. Existing codes and token sessions stay `null`
 * (their tokens then carry no such claims): a code or token session does
 * not tell when its sign-in happened (a silent sign-in's code is younger
 * than it), and the refresh tokens already issued carry none either.
 */
export async function up(db: Kysely<any>): Promise<void> {
  for (const table of TABLES) {
    await db.schema.alterTable(table).addColumn('acr', 'text').execute();
    await db.schema.alterTable(table).addColumn('amr', 'text').execute();
    await db.schema.alterTable(table).addColumn('auth_time', 'bigint').execute();
  }
  await db
    .updateTable('customer_sessions')
    .set({ acr: 'urn:connect:acr:pin-sms', amr: 'pin sms mfa', auth_time: sql`created_at` })
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of [...TABLES].reverse()) {
    await db.schema.alterTable(table).dropColumn('auth_time').execute();
    await db.schema.alterTable(table).dropColumn('amr').execute();
    await db.schema.alterTable(table).dropColumn('acr').execute();
  }
}
