import { sql, type Insertable, type Kysely, type Selectable, type UpdateObject } from 'kysely';
import type { Customer, CustomerStatus } from '../../../core/customers/customer.js';
import { NotFound } from '../../../core/storage-errors.js';
import type { CustomerPatch, CustomerStore } from '../../../core/customers/customer-store.js';
import type { CustomersTable, Database } from './schema.js';
import { insertOrConflict } from './insert-or-conflict.js';

/** The Kysely {@link CustomerStore}, shared by both engines. */
export function createCustomerStore(db: Kysely<Database>): CustomerStore {
  return {
    async findCustomer(profileId) {
      const row = await db.selectFrom('customers').selectAll().where('profile_id', '=', profileId).executeTakeFirst();
      return row && toCustomer(row);
    },

    async findCustomerByMobile(mobile) {
      const row = await db.selectFrom('customers').selectAll().where('mobile', '=', mobile).executeTakeFirst();
      return row && toCustomer(row);
    },

    async listCustomers() {
      const rows = await db.selectFrom('customers').selectAll().orderBy('created_at').orderBy('profile_id').execute();
      return rows.map(toCustomer);
    },

    async insertCustomer(c) {
      await insertOrConflict(
        db.insertInto('customers').values(customerRow(c)),
        `a customer with mobile ${c.mobile} or profile ID ${c.profileId} exists`,
      );
    },

    async updateCustomer(profileId, patch: CustomerPatch, now) {
      const values: UpdateObject<Database, 'customers'> = { updated_at: now };
      if (patch.name !== undefined) values.name = patch.name;
      if (patch.pinHash !== undefined) values.pin_hash = patch.pinHash;
      if (patch.status !== undefined) values.status = patch.status;
      // A PIN or a status that changes ends the known-device proofs made before (docs/journey.md,
      // "After a PIN reset"); the same value set again (the sandbox's demo customer at each start) does not.
      const changes = [
        ...(patch.pinHash !== undefined ? [sql<number>`case when pin_hash = ${patch.pinHash} then 0 else 1 end`] : []),
        ...(patch.status !== undefined ? [sql<number>`case when status = ${patch.status} then 0 else 1 end`] : []),
      ];
      if (changes.length > 0) values.credential_version = sql<number>`credential_version + ${sql.join(changes, sql` + `)}`;
      if (patch.pinAttempts !== undefined) values.failed_pin_attempts = patch.pinAttempts;
      if (patch.lockedUntil !== undefined) values.locked_until = patch.lockedUntil;
      const row = await db.updateTable('customers').set(values).where('profile_id', '=', profileId).returningAll().executeTakeFirst();
      if (!row) throw new NotFound(`customer ${profileId} not found`);
      return toCustomer(row);
    },

    async lockCustomer(profileId, now) {
      const row = await db
        .updateTable('customers')
        .set({ status: 'locked', credential_version: sql<number>`credential_version + 1`, updated_at: now })
        .where('profile_id', '=', profileId)
        .where('status', '<>', 'locked')
        .returningAll()
        .executeTakeFirst();
      return row && toCustomer(row);
    },

    async claimPinAttempt(mobile, now, maxAttempts, lockSeconds) {
      // One statement reads the lock and counts the attempt, before the PIN
      // is checked: concurrent attempts queue on the row, and the fifth one
      // sets the lock that refuses every later one (docs/journey.md).
      const attempt = sql<number>`case when locked_until is not null then 1 else failed_pin_attempts + 1 end`;
      const row = await db
        .updateTable('customers')
        .set({
          failed_pin_attempts: attempt,
          locked_until: sql<number | null>`case when ${attempt} >= ${maxAttempts} then cast(${now + lockSeconds} as bigint) else null end`,
          updated_at: now,
        })
        .where('mobile', '=', mobile)
        .where('status', '=', 'active')
        .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<=', now)]))
        .returningAll()
        .executeTakeFirst();
      if (!row) return undefined;
      const customer = toCustomer(row);
      return { customer, attempt: customer.pinAttempts };
    },

    async holdCustomerForSignIn(profileId) {
      // A write that changes nothing, so that PostgreSQL locks the row (SQLite's
      // IMMEDIATE transactions hold the whole database anyway).
      const row = await db
        .updateTable('customers')
        .set({ updated_at: sql<number>`updated_at` })
        .where('profile_id', '=', profileId)
        .where('status', '=', 'active')
        .returningAll()
        .executeTakeFirst();
      return row && toCustomer(row);
    },

    async replacePin(profileId, pinHash, now) {
      const row = await db
        .updateTable('customers')
        .set({ pin_hash: pinHash, failed_pin_attempts: 0, locked_until: null, credential_version: sql<number>`credential_version + 1`, updated_at: now })
        .where('profile_id', '=', profileId)
        .where('status', '=', 'active')
        .returningAll()
        .executeTakeFirst();
      return row && toCustomer(row);
    },

    async clearPinAttempts(profileId, attempt, now) {
      await db
        .updateTable('customers')
        .set({ failed_pin_attempts: 0, locked_until: null, updated_at: now })
        .where('profile_id', '=', profileId)
        // Attempts counted after this one (at the same time) keep their count and lock.
        .where('failed_pin_attempts', '=', attempt)
        .execute();
    },
  };
}

/** A customer as its row is inserted. */
export function customerRow(c: Customer): Insertable<CustomersTable> {
  return {
    profile_id: c.profileId,
    mobile: c.mobile,
    name: c.name,
    pin_hash: c.pinHash,
    status: c.status,
    failed_pin_attempts: c.pinAttempts,
    locked_until: c.lockedUntil,
    credential_version: c.credentialVersion,
    created_at: c.createdAt,
    updated_at: c.updatedAt,
  };
}

function toCustomer(row: Selectable<CustomersTable>): Customer {
  return {
    profileId: row.profile_id,
    mobile: row.mobile,
    name: row.name,
    pinHash: row.pin_hash,
    status: row.status as CustomerStatus,
    pinAttempts: Number(row.failed_pin_attempts),
    lockedUntil: row.locked_until === null ? null : Number(row.locked_until),
    credentialVersion: Number(row.credential_version),
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}
