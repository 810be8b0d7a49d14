// Frozen once shipped: never change it and never import app code here.
import { sql, type Kysely } from 'kysely';

/**
 * A right PIN now moves a journey straight to `otp_sent`, storing its
 * challenge with the move (docs/journey.md, "States and transitions"): the
 * state `pin_verified` is gone, and a journey left in it goes on as
 * `otp_sent` (its one-time-PIN page is the same).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`update authorization_requests set status = 'otp_sent' where status = 'pin_verified'`.execute(db);
}

export async function down(): Promise<void> {
  // `otp_sent` is a state the earlier code knows: nothing to undo.
}
