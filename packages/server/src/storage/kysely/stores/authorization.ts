import { PostgresAdapter, sql, type Kysely, type Selectable } from 'kysely';
import { deleteBatch } from './delete-batch.js';
import type { AuthorizationCodeRecord } from '../../../core/codes/authorization-code.js';
import type { AuthorizationRequestRecord, ConsentRecord, CustomerSessionRecord } from '../../../core/journey/records.js';
import { FINAL_STATES, isJourneyEnd, type JourneyState } from '../../../core/journey/states.js';
import { isUiLocale } from '../../../core/authorize/ui-locales.js';
import { formatScope, splitScope } from '../../../core/scopes.js';
import { REPLAYED_CODE_EXPIRY, type AuthorizationCodeStore, type CodeBinding } from '../../../core/codes/code-store.js';
import type { AuthorizationRequestStore, ConsentStore, CustomerSessionStore } from '../../../core/journey/stores.js';
import type { TokenSessionRecord } from '../../../core/tokens/records.js';
import type { AuthorizationCodesTable, AuthorizationRequestsTable, ConsentsTable, CustomerSessionsTable, Database } from './schema.js';
import { insertOrConflict, isUniqueViolation } from './insert-or-conflict.js';
import { Conflict } from '../../../core/storage-errors.js';
import { authenticationColumns, authenticationOfRow } from './authentication-columns.js';

const num = (value: number | null): number | null => (value === null ? null : Number(value));

/** The states of a journey that belongs to a customer and has not reached its code ({@link AuthorizationRequestStore.endJourneysOf}). */
const JOURNEYS_OF_A_CUSTOMER: readonly JourneyState[] = ['otp_sent', 'reset_otp_sent', 'reset_verified', 'consent_required'];

/** The Kysely {@link AuthorizationRequestStore}. */
export function createAuthorizationRequestStore(db: Kysely<Database>): AuthorizationRequestStore {
  return {
    async insertAuthorizationRequest(r) {
      await insertOrConflict(
        db.insertInto('authorization_requests').values({
          id_hash: r.idHash,
          client_id: r.clientId,
          redirect_uri: r.redirectUri,
          state: r.state,
          code_challenge: r.codeChallenge,
          login_hint: r.loginHint,
          browser_hash: r.browserHash,
          created_at: r.createdAt,
          expires_at: r.expiresAt,
          completed_at: r.completedAt,
          status: r.status,
          profile_id: r.profileId,
          ui_locale: r.uiLocale,
          scope: formatScope(r.scopes),
          ended_by: r.endedBy,
          acr_values: r.acrValues.length > 0 ? r.acrValues.join(' ') : null,
          max_age: r.maxAge,
          dpop_jkt: r.dpopJkt ?? null,
        }),
        'authorization request exists',
      );
    },

    async findAuthorizationRequest(idHash) {
      const row = await db.selectFrom('authorization_requests').selectAll().where('id_hash', '=', idHash).executeTakeFirst();
      return row && toRequest(row);
    },

    async transitionAuthorizationRequest(idHash, transition, now, profileId) {
      // One conditional update: of concurrent steps on one journey, on any
      // number of servers, only the first finds it still in a `from` state.
      const row = await db
        .updateTable('authorization_requests')
        .set({
          status: transition.to,
          ...(FINAL_STATES.includes(transition.to) ? { completed_at: now } : {}),
          ...(profileId === undefined ? {} : { profile_id: profileId }),
        })
        .where('id_hash', '=', idHash)
        .where('status', 'in', [...transition.from])
        .where('expires_at', '>', now)
        .returningAll()
        .executeTakeFirst();
      return row && toRequest(row);
    },

    async endJourneysOf(profileId, now, endedBy, except) {
      const result = await db
        .updateTable('authorization_requests')
        .set({ status: 'cancelled', completed_at: now, ended_by: endedBy })
        .where('expires_at', '>', now)
        .where((eb) =>
          eb.or([
            eb.and([eb('status', 'in', [...JOURNEYS_OF_A_CUSTOMER]), eb('profile_id', '=', profileId)]),
            // Also one back at its login page after a PIN reset: its reset's code proves the phone
            // for the next login (docs/journey.md, "After a PIN reset"), which must not outlive this.
            eb.and([
              eb('status', 'in', [...JOURNEYS_OF_A_CUSTOMER, 'pending']),
              eb.exists(
                eb
                  .selectFrom('otp_challenges')
                  .select(sql`1`.as('one'))
                  .whereRef('otp_challenges.request_hash', '=', 'authorization_requests.id_hash')
                  .where('otp_challenges.profile_id', '=', profileId),
              ),
            ]),
          ]),
        )
        .$if(except !== undefined, (query) => query.where('id_hash', '<>', except ?? ''))
        .executeTakeFirst();
      return Number(result.numUpdatedRows);
    },

    async deleteExpiredAuthorizationRequests(now, limit) {
      return deleteBatch(db, 'authorization_requests', ['id_hash'], sql`expires_at <= ${now}`, limit);
    },
  };
}

export function toRequest(row: Selectable<AuthorizationRequestsTable>): AuthorizationRequestRecord {
  return {
    idHash: row.id_hash,
    clientId: row.client_id,
    redirectUri: row.redirect_uri,
    state: row.state,
    codeChallenge: row.code_challenge,
    loginHint: row.login_hint,
    browserHash: row.browser_hash,
    createdAt: Number(row.created_at),
    expiresAt: Number(row.expires_at),
    completedAt: num(row.completed_at),
    status: row.status as JourneyState,
    profileId: row.profile_id,
    uiLocale: isUiLocale(row.ui_locale) ? row.ui_locale : null,
    scopes: splitScope(row.scope),
    endedBy: isJourneyEnd(row.ended_by) ? row.ended_by : null,
    acrValues: row.acr_values ? row.acr_values.split(' ') : [],
    maxAge: num(row.max_age),
    ...(row.dpop_jkt ? { dpopJkt: row.dpop_jkt } : {}),
  };
}

/** The Kysely {@link CustomerSessionStore}. */
export function createCustomerSessionStore(db: Kysely<Database>): CustomerSessionStore {
  return {
    async insertCustomerSession(s) {
      await insertOrConflict(
        db.insertInto('customer_sessions').values({
          id_hash: s.idHash,
          profile_id: s.profileId,
          created_at: s.createdAt,
          last_seen_at: s.lastSeenAt,
          expires_at: s.expiresAt,
          ended_at: s.endedAt,
          ...authenticationColumns(s.authentication),
        }),
        'customer session exists',
      );
    },

    async findCustomerSession(idHash) {
      const row = await db.selectFrom('customer_sessions').selectAll().where('id_hash', '=', idHash).executeTakeFirst();
      return row && toSession(row);
    },

    async useCustomerSession(idHash, now, idleSeconds) {
      // Checked and marked as used in one statement, so a session that ends
      // meanwhile (logout, lock) is never used after it ended.
      const row = await db
        .updateTable('customer_sessions')
        .set({ last_seen_at: now })
        .where('id_hash', '=', idHash)
        .where('ended_at', 'is', null)
        .where('expires_at', '>', now)
        .where('last_seen_at', '>', now - idleSeconds)
        .returningAll()
        .executeTakeFirst();
      return row && toSession(row);
    },

    async endCustomerSession(idHash, now) {
      await db.updateTable('customer_sessions').set({ ended_at: now }).where('id_hash', '=', idHash).where('ended_at', 'is', null).execute();
    },

    async endCustomerSessionsOf(profileId, now) {
      const result = await db
        .updateTable('customer_sessions')
        .set({ ended_at: now })
        .where('profile_id', '=', profileId)
        .where('ended_at', 'is', null)
        .executeTakeFirst();
      return Number(result.numUpdatedRows);
    },

    async deleteEndedCustomerSessions(now, idleSeconds, limit) {
      return deleteBatch(
        db,
        'customer_sessions',
        ['id_hash'],
        sql`(ended_at is not null or expires_at <= ${now} or last_seen_at <= ${now - idleSeconds})`,
        limit,
      );
    },
  };
}

function toSession(row: Selectable<CustomerSessionsTable>): CustomerSessionRecord {
  return {
    idHash: row.id_hash,
    profileId: row.profile_id,
    createdAt: Number(row.created_at),
    lastSeenAt: Number(row.last_seen_at),
    expiresAt: Number(row.expires_at),
    endedAt: num(row.ended_at),
    authentication: authenticationOfRow(row),
  };
}

/** The Kysely {@link ConsentStore}. */
export function createConsentStore(db: Kysely<Database>): ConsentStore {
  return {
    async insertConsent(c) {
      await db
        .insertInto('consents')
        .values({ profile_id: c.profileId, client_id: c.clientId, approved_at: c.approvedAt })
        .onConflict((conflict) => conflict.columns(['profile_id', 'client_id']).doNothing())
        .execute();
    },

    async findConsent(profileId, clientId) {
      const row = await db.selectFrom('consents').selectAll().where('profile_id', '=', profileId).where('client_id', '=', clientId).executeTakeFirst();
      return row && toConsent(row);
    },

    async listConsents(profileId) {
      const rows = await db.selectFrom('consents').selectAll().where('profile_id', '=', profileId).orderBy('approved_at').orderBy('client_id').execute();
      return rows.map(toConsent);
    },

    async deleteConsentsOf(profileId) {
      const result = await db.deleteFrom('consents').where('profile_id', '=', profileId).executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}

function toConsent(row: Selectable<ConsentsTable>): ConsentRecord {
  return { profileId: row.profile_id, clientId: row.client_id, approvedAt: Number(row.approved_at) };
}

/** The Kysely {@link AuthorizationCodeStore}. */
export function createAuthorizationCodeStore(db: Kysely<Database>): AuthorizationCodeStore {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  return {
    async insertAuthorizationCode(c) {
      await insertOrConflict(
        db.insertInto('authorization_codes').values({
          code_hash: c.codeHash,
          client_id: c.clientId,
          redirect_uri: c.redirectUri,
          profile_id: c.profileId,
          code_challenge: c.codeChallenge,
          created_at: c.createdAt,
          expires_at: c.expiresAt,
          consumed_at: c.consumedAt,
          scope: formatScope(c.scopes),
          ...authenticationColumns(c.authentication),
          dpop_jkt: c.dpopJkt ?? null,
        }),
        'authorization code exists',
      );
    },

    async findAuthorizationCode(codeHash) {
      const row = await db.selectFrom('authorization_codes').selectAll().where('code_hash', '=', codeHash).executeTakeFirst();
      return row && toCode(row);
    },

    async redeemAuthorizationCode(session, now, binding) {
      try {
        return await (postgres && !db.isTransaction ? redeemInOneStatement(db, session, now, binding) : redeemInTransaction(db, session, now, binding));
      } catch (error) {
        if (isUniqueViolation(error)) throw new Conflict('token session exists', { cause: error });
        throw error;
      }
    },

    async endReplayedAuthorizationCode(codeHash) {
      const result = await db
        .updateTable('authorization_codes')
        .set({ expires_at: REPLAYED_CODE_EXPIRY })
        .where('code_hash', '=', codeHash)
        .where('consumed_at', 'is not', null)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },

    async endAuthorizationCodesOf(holder, now) {
      const byHolder = holder.clientId === undefined ? (['profile_id', holder.profileId] as const) : (['client_id', holder.clientId] as const);
      const ended = await db
        .updateTable('authorization_codes')
        // 0, not now: an exchange whose clock is a second behind still finds it ended.
        .set({ expires_at: 0 })
        .where(byHolder[0], '=', byHolder[1])
        // Consumed ones too: no token session may be added for them any more.
        .where('expires_at', '>', 0)
        .where((eb) => eb.or([eb('consumed_at', 'is not', null), eb('expires_at', '>', now)]))
        .returning('consumed_at')
        .execute();
      return ended.filter((row) => row.consumed_at === null).length;
    },

    async deleteExpiredAuthorizationCodes(now, limit) {
      return deleteBatch(db, 'authorization_codes', ['code_hash'], sql`expires_at <= ${now}`, limit);
    },
  };
}

function toCode(row: Selectable<AuthorizationCodesTable>): AuthorizationCodeRecord {
  return {
    codeHash: row.code_hash,
    clientId: row.client_id,
    redirectUri: row.redirect_uri,
    profileId: row.profile_id,
    codeChallenge: row.code_challenge,
    createdAt: Number(row.created_at),
    expiresAt: Number(row.expires_at),
    consumedAt: num(row.consumed_at),
    scopes: splitScope(row.scope),
    authentication: authenticationOfRow(row),
    ...(row.dpop_jkt ? { dpopJkt: row.dpop_jkt } : {}),
  };
}

type CodeSession = TokenSessionRecord & { readonly codeHash: string };
type Redemption = 'redeemed' | 'refused' | 'ended';

/** The code of `s`, still redeemable at `now` for `binding`: the conditions of its consuming update. */
function redeemable(s: CodeSession, now: number, binding: CodeBinding) {
  const challenge = binding.codeChallenge === null ? sql`code_challenge is null` : sql`code_challenge = ${binding.codeChallenge}`;
  return sql`code_hash = ${s.codeHash} and client_id = ${s.clientId} and profile_id = ${s.profileId}
    and consumed_at is null and expires_at > ${now} and redirect_uri = ${binding.redirectUri} and ${challenge}`;
}

/** The token session row of `s`, as the values of an `insert ... select`. */
function sessionValues(s: CodeSession) {
  const { acr, amr, auth_time: authTime } = authenticationColumns(s.authentication);
  return sql`${s.sid}, ${s.clientId}, ${s.profileId}, ${s.codeHash}, ${s.refreshJti}, ${s.accessJti},
    cast(${s.createdAt} as bigint), cast(${s.refreshExpiresAt} as bigint), cast(${s.accessExpiresAt} as bigint), null,
    cast(${acr} as text), cast(${amr} as text), cast(${authTime} as bigint), cast(${s.dpopJkt ?? null} as text)`;
}

const SESSION_COLUMNS = sql`sid, client_id, profile_id, code_hash, refresh_jti, access_jti, created_at, refresh_expires_at, access_expires_at, revoked_at,
  acr, amr, auth_time, dpop_jkt`;

/**
 * PostgreSQL: the code consumed and its session added in one statement,
 * so nothing can come between them, not even a crash (a statement commits
 * whole or not at all). The customer's and the client's rows are taken in
 * share mode first (`held`: their newest versions, read under the lock),
 * then the code's row by the update.
 */
async function redeemInOneStatement(db: Kysely<Database>, s: CodeSession, now: number, binding: CodeBinding): Promise<Redemption> {
  const { rows } = await sql<{ consumed: number | string; added: number | string }>`
    with customer as (select status from customers where profile_id = ${s.profileId} for share),
    client as (select status, redirect_uri from clients where id = ${s.clientId} for share),
    consumed as (update authorization_codes set consumed_at = ${now}
                 where ${redeemable(s, now, binding)} and exists (select 1 from customer) and exists (select 1 from client)
                 returning code_hash),
    added as (insert into token_sessions (${SESSION_COLUMNS})
              select ${sessionValues(s)} from consumed
              where exists (select 1 from customer where status = 'active')
                and exists (select 1 from client where status = 'active' and redirect_uri = ${binding.redirectUri})
              returning sid)
    select (select count(*) from consumed) as consumed, (select count(*) from added) as added`.execute(db);
  return outcome(Number(rows[0]?.consumed ?? 0) === 1, Number(rows[0]?.added ?? 0) === 1);
}

/** SQLite (or inside a caller's transaction): the same two writes in one transaction, which commits both or neither. */
async function redeemInTransaction(db: Kysely<Database>, s: CodeSession, now: number, binding: CodeBinding): Promise<Redemption> {
  const work = async (trx: Kysely<Database>): Promise<Redemption> => {
    const { rows } = await sql`update authorization_codes set consumed_at = ${now} where ${redeemable(s, now, binding)} returning code_hash`.execute(trx);
    if (rows.length === 0) return 'refused';
    const added = await sql`
      insert into token_sessions (${SESSION_COLUMNS})
      select ${sessionValues(s)}
      where exists (select 1 from customers where profile_id = ${s.profileId} and status = 'active')
        and exists (select 1 from clients where id = ${s.clientId} and status = 'active' and redirect_uri = ${binding.redirectUri})`.execute(trx);
    return outcome(true, Number(added.numAffectedRows ?? 0) === 1);
  };
  return db.isTransaction ? work(db) : db.transaction().execute(work);
}

function outcome(consumed: boolean, added: boolean): Redemption {
  if (!consumed) return 'refused';
  return added ? 'redeemed' : 'ended';
}
