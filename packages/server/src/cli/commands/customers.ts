import type { CustomerCommandDeps } from '../../compose/command-deps.js';
import { createCustomer, findCustomerByReference, hashNewPin } from '../../core/customers/manage-customers.js';
import { lockCustomer, unlockCustomer } from '../../core/operator/lock-customer.js';
import type { Customer } from '../../core/customers/customer.js';
import { maskedMobile, type MobileNumber } from '../../core/customers/mobile.js';
import { NotFound } from '../../core/storage-errors.js';
import { isPasskeyHeld } from '../../core/passkeys/passkeys.js';
import type { PasskeyRecord } from '../../core/passkeys/records.js';
import { recordAdminAction } from './audit-actor.js';
import { isoTime, printable, table, UsageError, type CommandResult } from './output.js';

/** The public view of a customer: never the PIN hash. */
function customerView(customer: Customer, now: number) {
  return {
    profileId: customer.profileId,
    mobile: customer.mobile,
    userId: maskedMobile(customer.mobile, 'page'),
    name: customer.name,
    status: customer.status,
    lockedUntil: customer.lockedUntil !== null && customer.lockedUntil > now ? isoTime(customer.lockedUntil) : null,
    createdAt: isoTime(customer.createdAt),
  };
}

/** The public view of a passkey: never its public key or user handle. */
function passkeyView(passkey: PasskeyRecord, now: number) {
  return {
    credentialId: passkey.credentialId,
    createdAt: isoTime(passkey.createdAt),
    lastUsedAt: passkey.lastUsedAt === null ? null : isoTime(passkey.lastUsedAt),
    heldUntil: isPasskeyHeld(passkey, now) ? isoTime(passkey.heldUntil as number) : null,
    suspended: passkey.suspendedAt !== null,
  };
}

/** One line of `customers show` about a passkey. */
function passkeyLine(p: ReturnType<typeof passkeyView>): string {
  const held = p.heldUntil ? `, held until ${p.heldUntil}` : '';
  const suspended = p.suspended ? ', suspended by the lock' : '';
  return `${p.credentialId} (created ${p.createdAt}, last used ${p.lastUsedAt ?? 'never'}${held}${suspended})`;
}

/** One customer with the clients they approved (their sessions sign in to these silently) and their passkeys. */
async function describe(deps: CustomerCommandDeps, customer: Customer): Promise<CommandResult> {
  const now = deps.clock.nowSeconds();
  const view = customerView(customer, now);
  const consents = await deps.consents.listConsents(customer.profileId);
  const approvedClients = await Promise.all(
    consents.map(async (c) => ({ clientId: c.clientId, name: (await deps.clients.findClient(c.clientId))?.name ?? null, approvedAt: isoTime(c.approvedAt) })),
  );
  const passkeys = (await deps.passkeys.listPasskeysOf(customer.profileId)).map((p) => passkeyView(p, now));
  return {
    json: { ...view, approvedClients, passkeys },
    text: table([
      ['profile ID', view.profileId],
      ['mobile', view.mobile],
      ['user ID', view.userId],
      ['name', view.name ?? '-'],
      ['status', view.lockedUntil ? `${view.status} (too many wrong PINs: locked until ${view.lockedUntil})` : view.status],
      ['created', view.createdAt],
      ...(approvedClients.length === 0
        ? [['approved clients', '-'] as const]
        : approvedClients.map((c) => ['approved client', `${c.clientId} (${c.name ?? 'removed'}, since ${c.approvedAt})`] as const)),
      ...(passkeys.length === 0 ? [['passkeys', '-'] as const] : passkeys.map((p) => ['passkey', passkeyLine(p)] as const)),
    ]),
  };
}

async function findOrFail(deps: CustomerCommandDeps, reference: string | undefined): Promise<Customer> {
  if (!reference) throw new UsageError('a profile ID or mobile number is required');
  const customer = await findCustomerByReference(reference, deps.customers);
  if (!customer) throw new NotFound(`no customer ${reference} in the ${deps.environment} environment`);
  return customer;
}

/**
 * `customers create --mobile E164 [--pin DIGITS | --pin-stdin] [--name N]`,
 * once the PIN has been read (`readNewPin`); `mobile` as checked then
 * (`checkNewMobile`), or as typed.
 */
export async function createCustomerCommand(
  deps: CustomerCommandDeps,
  options: { mobile?: MobileNumber | string | undefined; pin?: string | undefined; name?: string | undefined },
): Promise<CommandResult> {
  const { mobile: typed, pin } = options;
  if (!typed) throw new UsageError('--mobile is required');
  if (!pin) throw new UsageError('a PIN is required');
  // The PIN hash takes about 100 ms: done before the transaction, which holds
  // the database's write lock until it ends (docs/operator-guide.md).
  const pinHash = await hashNewPin(pin);
  const { customer, mobile } = await deps.transaction(async (tx) => {
    const created = await createCustomer(
      { mobile: typed, pin, pinHash, name: options.name },
      { customers: tx.customers, clock: deps.clock, smsCountries: deps.smsCountries },
    );
    await recordAdminAction(deps, { type: 'customer.created', subject: created.customer.profileId }, tx);
    return created;
  });
  return {
    json: { profileId: customer.profileId, mobile: customer.mobile, userId: mobile.masked },
    text: table([
      ['profile ID', customer.profileId],
      ['mobile', customer.mobile],
      ['user ID', mobile.masked],
    ]),
  };
}

/** `customers list`. */
export async function listCustomersCommand(deps: CustomerCommandDeps): Promise<CommandResult> {
  const now = deps.clock.nowSeconds();
  const customers = (await deps.customers.listCustomers()).map((c) => customerView(c, now));
  const text =
    customers.length === 0
      ? `no customers in the ${deps.environment} environment\n`
      : customers.map((c) => printable(`${c.profileId}  ${c.mobile}  ${c.status.padEnd(6)}  ${c.name ?? ''}`.trimEnd())).join('\n') + '\n';
  return { json: customers, text };
}

/** `customers show PROFILE_ID|E164`. */
export async function showCustomerCommand(deps: CustomerCommandDeps, reference: string | undefined): Promise<CommandResult> {
  return describe(deps, await findOrFail(deps, reference));
}

/**
 * `customers lock` / `customers unlock`. A lock stops every login and ends,
 * in one transaction, the customer's sessions, token sessions (refresh and
 * access tokens) and unredeemed codes, and removes their approvals of
 * clients (after an unlock each client asks for consent again); the output
 * says how many of each. Locking a locked customer is a no-op that says so.
 * Unlocking also clears a lockout from wrong PINs, and revives nothing the
 * lock ended (docs/operator-guide.md, "Customers").
 */
export async function setCustomerLockCommand(deps: CustomerCommandDeps, reference: string | undefined, lock: boolean): Promise<CommandResult> {
  const customer = await findOrFail(deps, reference);
  const now = deps.clock.nowSeconds();
  if (!lock) {
    const unlocked = await deps.transaction(async (tx) => {
      const changed = await unlockCustomer(customer.profileId, tx, now);
      await recordAdminAction(deps, { type: 'customer.unlocked', subject: customer.profileId }, tx);
      return changed;
    });
    return describe(deps, unlocked);
  }
  const outcome = await deps.transaction(async (tx) => {
    const locked = await lockCustomer(customer.profileId, tx, now);
    if (locked.changed) {
      const { ended } = locked;
      await recordAdminAction(
        deps,
        {
          type: 'customer.locked',
          subject: customer.profileId,
          details: {
            journeys_ended: ended.journeys,
            sessions_ended: ended.sessions,
            token_sessions_revoked: ended.tokenSessions,
            codes_ended: ended.codes,
            approvals_removed: ended.approvals,
            passkeys_suspended: ended.passkeys,
          },
        },
        tx,
      );
    }
    return locked;
  });
  const described = await describe(deps, outcome.customer);
  if (!outcome.changed) {
    return {
      json: {
        ...(described.json as object),
        alreadyLocked: true,
        ended: { journeys: 0, sessions: 0, tokenSessions: 0, codes: 0, approvals: 0, passkeys: outcome.suspendedPasskeys },
      },
      text:
        described.text +
        (outcome.suspendedPasskeys === 0
          ? `\nThe customer was already locked: nothing changed.\n`
          : `\nThe customer was already locked; ${outcome.suspendedPasskeys} passkey(s) added meanwhile are now suspended.\n`),
    };
  }
  const { ended } = outcome;
  return {
    json: { ...(described.json as object), alreadyLocked: false, ended },
    text:
      described.text +
      `\nLocked. Cancelled ${count(ended.journeys, 'sign-in')} under way, ended ${count(ended.sessions, 'login session')}, revoked ${count(ended.tokenSessions, 'token session')} ` +
      `(their refresh and access tokens), ended ${count(ended.codes, 'unredeemed authorization code')}, ` +
      `removed ${count(ended.approvals, 'client approval')}` +
      (ended.passkeys > 0 ? `, suspended ${count(ended.passkeys, 'passkey')} (until an unlock)` : '') +
      `.\n`,
  };
}

/**
 * `customers passkeys remove PROFILE_ID|E164 CREDENTIAL_ID`: deletes one
 * passkey of the customer, audited in the same transaction
 * (docs/operator-guide.md, "Passkeys").
 *
 * @throws NotFound when the customer has no passkey with that credential ID.
 */
export async function removePasskeyCommand(
  deps: CustomerCommandDeps,
  reference: string | undefined,
  credentialId: string | undefined,
): Promise<CommandResult> {
  const customer = await findOrFail(deps, reference);
  if (!credentialId) throw new UsageError('a credential ID is required (see customers show)');
  await deps.transaction(async (tx) => {
    if (!(await tx.passkeys.removePasskey(customer.profileId, credentialId))) {
      throw new NotFound(`customer ${customer.profileId} has no passkey ${credentialId} (see customers show)`);
    }
    await recordAdminAction(deps, { type: 'customer.passkey_removed', subject: customer.profileId, details: { credential_id: credentialId } }, tx);
  });
  const described = await describe(deps, customer);
  return {
    json: { ...(described.json as object), removedPasskey: credentialId },
    text: described.text + `\nRemoved passkey ${printable(credentialId)}: it no longer signs in. Sessions and tokens it made stay: "customers lock" ends them.\n`,
  };
}

function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}
