// Frozen once shipped: never change it and never import app code here.
import type { Kysely } from 'kysely';

/**
 * DPoP-bound tokens (docs/tokens.md, "DPoP-bound tokens"): `dpop_jkt`, the
 * SHA-256 JWK thumbprint (RFC 7638, base64url) of the key the tokens are
 * bound to, or null for bearer tokens.
 *
 * `authorization_requests.dpop_jkt`: the `dpop_jkt` of the `/authorize`
 * request, carried to its code. `authorization_codes.dpop_jkt`: the key
 * whose proof must come with the code's redemption. `token_sessions.dpop_jkt`:
 * the key the session's tokens are bound to.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('authorization_requests').addColumn('dpop_jkt', 'text').execute();
  await db.schema.alterTable('authorization_codes').addColumn('dpop_jkt', 'text').execute();
  await db.schema.alterTable('token_sessions').addColumn('dpop_jkt', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('token_sessions').dropColumn('dpop_jkt').execute();
  await db.schema.alterTable('authorization_codes').dropColumn('dpop_jkt').execute();
  await db.schema.alterTable('authorization_requests').dropColumn('dpop_jkt').execute();
}
