import { PostgresAdapter, sql, type Kysely, type RawBuilder, type Selectable } from 'kysely';
import type { ChallengeStart, OtpEntry, PasskeySignIn, OtpEntryOutcome, PinResetUse, ResetOtpEntry, ResetOtpOutcome, SignInCompletion, SignInStore } from '../../../core/journey/stores.js';
import { TRANSITIONS } from '../../../core/journey/states.js';
import type { OtpChallengeRecord } from '../../../core/otp/records.js';
import { formatScope } from '../../../core/scopes.js';
import { createAuthorizationCodeStore, createAuthorizationRequestStore, createConsentStore, createCustomerSessionStore, toRequest } from './authorization.js';
import { createCustomerStore, customerRow } from './customers.js';
import { createOtpChallengeStore, toChallenge } from './otp-challenges.js';
import { authenticationColumns } from './authentication-columns.js';
import type { AuthorizationRequestsTable, Database, OtpChallengesTable } from './schema.js';

/**
 * The Kysely {@link SignInStore}. On PostgreSQL a login's steps are each one
 * statement: the writes are data-modifying `WITH` clauses, guarded on one
 * another, so they all happen or none does, with no transaction to begin or
 * commit (docs/operator-guide.md, "Database round trips"). SQLite cannot
 * write several tables in one statement; there each step is one
 * transaction, which costs no round trip in an embedded database.
 */
export function createSignInStore(db: Kysely<Database>): SignInStore {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  return {
    async findJourney(idHash) {
      const latest = sql<string>`(select l.id from otp_challenges l where l.request_hash = r.id_hash order by l.created_at desc, l.id desc limit 1)`;
      const row = await db
        .selectFrom('authorization_requests as r')
        .leftJoin('otp_challenges as c', (join) => join.on('c.id', '=', latest))
        .selectAll('r')
        .select([
          'c.id as c_id',
          'c.request_hash as c_request_hash',
          'c.purpose as c_purpose',
          'c.mobile as c_mobile',
          'c.profile_id as c_profile_id',
          'c.pending_pin_hash as c_pending_pin_hash',
          'c.code_hash as c_code_hash',
          'c.attempts as c_attempts',
          'c.resends as c_resends',
          'c.last_sent_at as c_last_sent_at',
          'c.expires_at as c_expires_at',
          'c.created_at as c_created_at',
          'c.consumed_at as c_consumed_at',
          sql<number>`case when exists (select 1 from customers h where h.mobile = r.login_hint) then 1 else 0 end`.as('hint_registered'),
          sql<number>`case when exists (select 1 from customers h join passkeys k on k.profile_id = h.profile_id where h.mobile = r.login_hint and k.suspended_at is null) then 1 else 0 end`.as('hint_passkey'),
        ])
        .where('r.id_hash', '=', idHash)
        .executeTakeFirst();
      if (!row) return undefined;
      return { request: toRequest(row as Selectable<AuthorizationRequestsTable>), challenge: challengeOf(row), hintRegistered: Number(row.hint_registered) === 1, hintHasPasskey: Number(row.hint_passkey) === 1 };
    },

    async startChallenge(start) {
      return postgres && db.isTransaction === false ? startChallengeInOneStatement(db, start) : inTransaction(db, (trx) => startChallengeStepByStep(trx, start));
    },

    async enterOtp(entry) {
      // A registration's new account needs its own checks; it goes step by step on both engines.
      if (postgres && !db.isTransaction && 'profileId' in entry.customer) return enterOtpInOneStatement(db, entry, entry.customer.profileId);
      try {
        return await inTransaction(db, (trx) => enterOtpStepByStep(trx, entry));
      } catch (error) {
        // Inside a caller's transaction the rollback is the caller's to make.
        if (error instanceof Rollback && !db.isTransaction) return error.outcome;
        throw error;
      }
    },

    async signInWithPasskey(signIn) {
      return inTransaction(db, (trx) => signInWithPasskeyStepByStep(trx, signIn));
    },

    async enterResetOtp(entry) {
      return postgres && !db.isTransaction ? enterResetOtpInOneStatement(db, entry) : inTransaction(db, (trx) => enterResetOtpStepByStep(trx, entry));
    },

    async usePinReset(use) {
      const { rows } = await sql<Selectable<AuthorizationRequestsTable>>`
        update authorization_requests set status = ${TRANSITIONS.pinReset.to}, profile_id = null
        where id_hash = ${use.idHash} and status in (${sql.join(TRANSITIONS.pinReset.from)}) and profile_id = ${use.profileId} and expires_at > ${use.now}
          and exists (select 1 from otp_challenges c where c.id = ${use.challengeId} and c.request_hash = ${use.idHash} and c.purpose = 'reset'
                        and c.profile_id = ${use.profileId} and c.consumed_at is not null and c.consumed_at > ${use.answeredAfter})
        returning *`.execute(db);
      return rows[0] && toRequest(rows[0]);
    },
  };
}

/** The challenge columns of {@link SignInStore.findJourney}'s row, when it has a challenge. */
function challengeOf(row: Record<string, unknown>): OtpChallengeRecord | undefined {
  if (row.c_id === null || row.c_id === undefined) return undefined;
  const columns = Object.fromEntries(Object.entries(row).filter(([name]) => name.startsWith('c_')).map(([name, value]) => [name.slice(2), value]));
  return toChallenge(columns as unknown as Selectable<OtpChallengesTable>);
}

/** Carries an outcome out of a transaction that must roll back. */
class Rollback {
  constructor(readonly outcome: OtpEntryOutcome) {}
}

async function inTransaction<T>(db: Kysely<Database>, work: (trx: Kysely<Database>) => Promise<T>): Promise<T> {
  return db.isTransaction ? work(db) : db.transaction().execute(work);
}

const OTP_VERIFIABLE = TRANSITIONS.otpVerified.from;

async function startChallengeStepByStep(db: Kysely<Database>, start: ChallengeStart) {
  if (start.clearPin) await createCustomerStore(db).clearPinAttempts(start.clearPin.profileId, start.clearPin.attempt, start.now);
  const transition = start.transition ?? TRANSITIONS.codeSent;
  const moved = await createAuthorizationRequestStore(db).transitionAuthorizationRequest(start.idHash, transition, start.now, start.profileId);
  if (moved) await createOtpChallengeStore(db).insertOtpChallenge(start.challenge);
  return moved;
}

async function startChallengeInOneStatement(db: Kysely<Database>, start: ChallengeStart) {
  const { now, challenge: c } = start;
  const transition = start.transition ?? TRANSITIONS.codeSent;
  // The customer's row is locked before the journey's, in the order an entry of the one-time PIN
  // takes them (`enterOtpInOneStatement`), so the two never wait on each other: `moved` reads
  // `cleared` first, through a subquery evaluated once before the journey's row is scanned.
  const clear = start.clearPin
    ? sql`cleared as (update customers set failed_pin_attempts = 0, locked_until = null, updated_at = ${now}
          where profile_id = ${start.clearPin.profileId} and failed_pin_attempts = ${start.clearPin.attempt} returning 1 as one),`
    : sql``;
  const afterClear = start.clearPin ? sql`and (select count(*) from cleared) >= 0` : sql``;
  const { rows } = await sql<Selectable<AuthorizationRequestsTable>>`
    with ${clear}
    moved as (update authorization_requests set status = ${transition.to}, profile_id = ${start.profileId}
              where id_hash = ${start.idHash} and status in (${sql.join(transition.from)}) and expires_at > ${now} ${afterClear}
              returning *),
    stored as (insert into otp_challenges (id, request_hash, purpose, mobile, profile_id, pending_pin_hash, code_hash, attempts, resends, last_sent_at, expires_at, created_at, consumed_at)
               select ${c.id}, ${c.requestHash}, ${c.purpose}, ${c.mobile}, ${c.profileId}, ${c.pendingPinHash}, ${c.codeHash},
                 ${c.attempts}::integer, ${c.resends}::integer, ${c.lastSentAt}::bigint, ${c.expiresAt}::bigint, ${c.createdAt}::bigint, null
               from moved)
    select * from moved`.execute(db);
  return rows[0] && toRequest(rows[0]);
}

/**
 * Whether the customer of `entry` can sign in now: an existing one active
 * (wrong PINs since its PIN was checked lock PIN login, not this sign-in),
 * or a new one's mobile still free.
 */
function customerCanSignIn(entry: OtpEntry) {
  return 'profileId' in entry.customer
    ? sql`exists (select 1 from customers where profile_id = ${entry.customer.profileId} and status = 'active')`
    : sql`not exists (select 1 from customers where mobile = ${entry.customer.create.mobile})`;
}

/** Whether the journey of `entry` can still move along `otpVerified`. */
function journeyCanMove(entry: OtpEntry) {
  return sql`exists (select 1 from authorization_requests where id_hash = ${entry.idHash} and status in (${sql.join(OTP_VERIFIABLE)}) and expires_at > ${entry.now})`;
}

/**
 * Counts one entry of a login's or a registration's code (never a reset's:
 * that proves the phone, not the PIN) and compares it, in one conditional update. A right
 * entry uses the challenge up only when the sign-in can complete (its
 * journey can move, its customer can sign in); otherwise the challenge stays
 * as it was but for the count.
 */
function claimEntry(entry: OtpEntry, after: RawBuilder<unknown> = sql``) {
  const right = sql`code_hash in (${sql.join(entry.codeHashes)})`;
  return sql`update otp_challenges set attempts = attempts + 1,
      consumed_at = case when ${right} and ${customerCanSignIn(entry)} and ${journeyCanMove(entry)} then cast(${entry.now} as bigint) else null end
    where id = ${entry.challengeId} and request_hash = ${entry.idHash} and purpose <> 'reset'
      and consumed_at is null and expires_at > ${entry.now} and attempts < ${entry.maxAttempts} ${after}
    returning attempts, consumed_at, case when ${right} then 1 else 0 end as is_right`;
}

/** A claim as its row says it: counted or not, right or not, the challenge used up or not. */
interface Claim {
  readonly attempts: number | string;
  readonly consumed_at: number | string | null;
  readonly is_right: number | string | boolean;
}

/** What a claim decides by itself: not counted, wrong, or right but not to be completed (`undefined`: go on and complete). */
async function outcomeOf(claim: Claim | undefined, customerOk: () => Promise<boolean>): Promise<OtpEntryOutcome | undefined> {
  if (!claim) return { kind: 'not_counted' };
  if (Number(claim.is_right) !== 1) return { kind: 'wrong', attempts: Number(claim.attempts) };
  if (claim.consumed_at === null) return right((await customerOk()) ? 'lost' : 'customer_unavailable');
  return undefined;
}

function right(kind: Exclude<SignInCompletion['kind'], 'completed'>): OtpEntryOutcome {
  return { kind: 'right', done: { kind } };
}

function completed(credentialVersion: number | string): OtpEntryOutcome {
  return { kind: 'right', done: { kind: 'completed', credentialVersion: Number(credentialVersion) } };
}

async function enterOtpStepByStep(db: Kysely<Database>, entry: OtpEntry): Promise<OtpEntryOutcome> {
  const { rows } = await claimEntry(entry).execute(db);
  const decided = await outcomeOf(rows[0] as Claim | undefined, async () => {
    const { rows: ok } = await sql<{ ok: number }>`select case when ${customerCanSignIn(entry)} then 1 else 0 end as ok`.execute(db);
    return Number(ok[0]?.ok) === 1;
  });
  if (decided) return decided;
  const { now } = entry;
  const customers = createCustomerStore(db);
  // The credential version the sign-in completes at: a new account's own, or the one held.
  const version =
    'profileId' in entry.customer
      ? (await customers.holdCustomerForSignIn(entry.customer.profileId))?.credentialVersion
      : (await customers.findCustomerByMobile(entry.customer.create.mobile)) === undefined
        ? entry.customer.create.credentialVersion
        : undefined;
  if (version === undefined) return right('customer_unavailable');
  // The journey names the customer it signed in (a registration's new account too): its passkey offer enrols only them.
  const signedIn = 'profileId' in entry.customer ? entry.customer.profileId : entry.customer.create.profileId;
  if (!(await createAuthorizationRequestStore(db).transitionAuthorizationRequest(entry.idHash, TRANSITIONS.otpVerified, now, signedIn))) return right('lost');
  if ('create' in entry.customer) {
    const created = await db
      .insertInto('customers')
      .values(customerRow(entry.customer.create))
      .onConflict((conflict) => conflict.doNothing())
      .executeTakeFirst();
    // Registered by a concurrent sign-in since it was checked: undo it all.
    if (Number(created.numInsertedOrUpdatedRows ?? 0) !== 1) throw new Rollback(right('customer_unavailable'));
  }
  const sessions = createCustomerSessionStore(db);
  if (entry.endSessionHash !== null) await sessions.endCustomerSession(entry.endSessionHash, now);
  await sessions.insertCustomerSession(entry.session);
  await createConsentStore(db).insertConsent(entry.consent);
  await createAuthorizationCodeStore(db).insertAuthorizationCode(entry.code);
  return completed(version);
}

async function enterOtpInOneStatement(db: Kysely<Database>, entry: OtpEntry, profileId: string): Promise<OtpEntryOutcome> {
  const { now, session: s, consent, code: k } = entry;
  const sa = authenticationColumns(s.authentication);
  const ka = authenticationColumns(k.authentication);
  const endSession =
    entry.endSessionHash === null
      ? sql``
      : sql`ended as (update customer_sessions set ended_at = ${now} where id_hash = ${entry.endSessionHash} and ended_at is null and exists (select 1 from moved)),`;
  // The customer's row first, then the challenge's, then the journey's: the order `customers lock`
  // and a PIN reset take them in (the customer, then its challenges, then its journeys), and a right
  // PIN's step (the customer, then the journey), so none of them waits on another in a cycle.
  // `claim` reads `first` through a subquery evaluated once before the challenge's row is scanned.
  const { rows } = await sql<{
    attempts: number | null;
    consumed_at: number | string | null;
    is_right: number | null;
    customer_ok: number;
    held: number;
    credential_version: number | string | null;
    completed: number;
  }>`
    with first as (select profile_id from customers where profile_id = ${profileId} for update),
    claim as (${claimEntry(entry, sql`and (select count(*) from first) >= 0`)}),
    held as (update customers set updated_at = updated_at
             where profile_id = ${profileId} and status = 'active'
               and exists (select 1 from claim where consumed_at is not null)
             returning profile_id, credential_version),
    moved as (update authorization_requests set status = ${TRANSITIONS.otpVerified.to}, completed_at = ${now}, profile_id = ${profileId}
              where id_hash = ${entry.idHash} and status in (${sql.join(OTP_VERIFIABLE)}) and expires_at > ${now} and exists (select 1 from held)
              returning id_hash),
    ${endSession}
    session as (insert into customer_sessions (id_hash, profile_id, created_at, last_seen_at, expires_at, ended_at, acr, amr, auth_time)
                select ${s.idHash}, ${s.profileId}, ${s.createdAt}::bigint, ${s.lastSeenAt}::bigint, ${s.expiresAt}::bigint, null,
                  ${sa.acr}::text, ${sa.amr}::text, ${sa.auth_time}::bigint from moved),
    consent as (insert into consents (profile_id, client_id, approved_at)
                select ${consent.profileId}, ${consent.clientId}, ${consent.approvedAt}::bigint from moved
                on conflict (profile_id, client_id) do nothing),
    code as (insert into authorization_codes (code_hash, client_id, redirect_uri, profile_id, code_challenge, created_at, expires_at, consumed_at, scope, acr, amr, auth_time, dpop_jkt)
             select ${k.codeHash}, ${k.clientId}, ${k.redirectUri}, ${k.profileId}, ${k.codeChallenge}, ${k.createdAt}::bigint, ${k.expiresAt}::bigint, null, ${formatScope(k.scopes)},
               ${ka.acr}::text, ${ka.amr}::text, ${ka.auth_time}::bigint, ${k.dpopJkt ?? null}::text from moved)
    select (select attempts from claim) as attempts, (select consumed_at from claim) as consumed_at, (select is_right from claim) as is_right,
      (case when ${customerCanSignIn(entry)} then 1 else 0 end) as customer_ok,
      (select count(*) from held)::integer as held, (select credential_version from held) as credential_version,
      (select count(*) from moved)::integer as completed`.execute(db);
  const row = rows[0];
  const claim = row && row.attempts !== null ? { attempts: row.attempts, consumed_at: row.consumed_at, is_right: row.is_right ?? 0 } : undefined;
  const decided = await outcomeOf(claim, async () => Number(row?.customer_ok) === 1);
  if (decided) return decided;
  if (Number(row?.completed) === 1) return completed(row?.credential_version ?? 0);
  // Used up, yet not completed: a lock or another tab changed the customer or the journey in the same instant.
  return right(Number(row?.held) === 1 ? 'lost' : 'customer_unavailable');
}

/**
 * A passkey's sign-in, in one transaction on both engines: the customer's
 * row is taken first (held while active: the order `customers lock` takes
 * it in, before it suspends the passkeys and ends the journeys), then the
 * passkey is checked unsuspended, then the journey moves; only then are
 * the previous session ended and the session, approval and code stored.
 * Anything that cannot happen rolls it all back.
 */
async function signInWithPasskeyStepByStep(db: Kysely<Database>, signIn: PasskeySignIn): Promise<SignInCompletion> {
  const { now, profileId } = signIn;
  const held = await db
    .updateTable('customers')
    .set({ updated_at: sql<number>`updated_at` })
    .where('profile_id', '=', profileId)
    .where('status', '=', 'active')
    .returning('credential_version')
    .executeTakeFirst();
  if (!held) return { kind: 'customer_unavailable' };
  const usable = await db
    .selectFrom('passkeys')
    .select('credential_id')
    .where('credential_id', '=', signIn.credentialId)
    .where('profile_id', '=', profileId)
    .where('suspended_at', 'is', null)
    .executeTakeFirst();
  if (!usable) return { kind: 'customer_unavailable' };
  if (!(await createAuthorizationRequestStore(db).transitionAuthorizationRequest(signIn.idHash, TRANSITIONS.passkeyVerified, now, profileId))) return { kind: 'lost' };
  const sessions = createCustomerSessionStore(db);
  if (signIn.endSessionHash !== null) await sessions.endCustomerSession(signIn.endSessionHash, now);
  await sessions.insertCustomerSession(signIn.session);
  await createConsentStore(db).insertConsent(signIn.consent);
  await createAuthorizationCodeStore(db).insertAuthorizationCode(signIn.code);
  return { kind: 'completed', credentialVersion: Number(held.credential_version) };
}

const RESET_VERIFIABLE = TRANSITIONS.resetVerified.from;

/**
 * Counts one entry of a reset code and compares it, in one conditional
 * update. It is right only when the code matches and the challenge's
 * customer is active (a reset asked for a mobile without such an account
 * has none); a right one uses the challenge up only when the journey can
 * move. The row names the customer the journey is then bound to.
 */
function claimResetEntry(entry: ResetOtpEntry) {
  const right = sql`code_hash in (${sql.join(entry.codeHashes)}) and exists (select 1 from customers u where u.profile_id = otp_challenges.profile_id and u.status = 'active')`;
  const journeyCanMove = sql`exists (select 1 from authorization_requests where id_hash = ${entry.idHash} and status in (${sql.join(RESET_VERIFIABLE)}) and expires_at > ${entry.now})`;
  return sql`update otp_challenges set attempts = attempts + 1,
      consumed_at = case when ${right} and ${journeyCanMove} then cast(${entry.now} as bigint) else null end
    where id = ${entry.challengeId} and request_hash = ${entry.idHash} and purpose = 'reset'
      and consumed_at is null and expires_at > ${entry.now} and attempts < ${entry.maxAttempts}
    returning attempts, consumed_at, profile_id, case when ${right} then 1 else 0 end as is_right`;
}

/** A reset claim as its row says it. */
interface ResetClaim extends Claim {
  readonly profile_id: string | null;
}

/** The outcome of a reset claim, once it is known whether the journey moved. */
function resetOutcome(claim: ResetClaim | undefined, moved: boolean): ResetOtpOutcome {
  if (!claim) return { kind: 'not_counted' };
  if (Number(claim.is_right) !== 1) return { kind: 'wrong', attempts: Number(claim.attempts) };
  return { kind: 'right', done: claim.consumed_at !== null && moved ? 'verified' : 'lost' };
}

async function enterResetOtpStepByStep(db: Kysely<Database>, entry: ResetOtpEntry): Promise<ResetOtpOutcome> {
  const { rows } = await claimResetEntry(entry).execute(db);
  const claim = rows[0] as ResetClaim | undefined;
  if (!claim || claim.consumed_at === null || claim.profile_id === null) return resetOutcome(claim, false);
  const moved = await createAuthorizationRequestStore(db).transitionAuthorizationRequest(entry.idHash, TRANSITIONS.resetVerified, entry.now, claim.profile_id);
  return resetOutcome(claim, moved !== undefined);
}

async function enterResetOtpInOneStatement(db: Kysely<Database>, entry: ResetOtpEntry): Promise<ResetOtpOutcome> {
  // The challenge's row, then the journey's: the order an entry of a login's code takes them in.
  const { rows } = await sql<{ attempts: number | null; consumed_at: number | string | null; profile_id: string | null; is_right: number | null; moved: number }>`
    with claim as (${claimResetEntry(entry)}),
    moved as (update authorization_requests set status = ${TRANSITIONS.resetVerified.to}, profile_id = (select profile_id from claim)
              where id_hash = ${entry.idHash} and status in (${sql.join(RESET_VERIFIABLE)}) and expires_at > ${entry.now}
                and exists (select 1 from claim where consumed_at is not null)
              returning id_hash)
    select (select attempts from claim) as attempts, (select consumed_at from claim) as consumed_at, (select profile_id from claim) as profile_id,
      (select is_right from claim) as is_right, (select count(*) from moved)::integer as moved`.execute(db);
  const row = rows[0];
  const claim = row && row.attempts !== null ? { attempts: row.attempts, consumed_at: row.consumed_at, profile_id: row.profile_id, is_right: row.is_right ?? 0 } : undefined;
  return resetOutcome(claim, Number(row?.moved) === 1);
}
