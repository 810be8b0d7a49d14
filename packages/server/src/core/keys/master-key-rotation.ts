import type { Clock } from '../clock.js';
import { deriveKey, seal, unseal, type KeyPurpose } from './master-key.js';
import type { MasterKeyRecord, MasterKeyStore, SealedKind, SealedValue } from './master-key-store.js';
import { firstMasterKey, type MasterKeys } from './master-keys.js';
import { idempotentResponseLabel, reuseLabel } from './sealed-labels.js';

/*
 * Replacing the master key (docs/operator-guide.md, "Replacing the master
 * key"): `rotate` makes the new key the writing one and re-seals every
 * sealed stored value under it; `retire` stops the old one being accepted.
 * Both are safe to run again: every step is one atomic conditional update.
 */

/** A refusal of `master-key rotate` or `retire`: one line, nothing changed. */
export class MasterKeyRefused extends Error {
  override readonly name = 'MasterKeyRefused';
}

/** What replacing the master key works with. */
export interface MasterKeyActionDeps {
  readonly store: MasterKeyStore;
  /** The configured keys (`CONNECT_MASTER_KEY`, `CONNECT_PREVIOUS_MASTER_KEY`). */
  readonly masterKeys: MasterKeys;
  readonly clock: Clock;
}

/** The sub-key each kind of sealed value is sealed under, and its label. */
const KINDS: Record<SealedKind, { purpose: KeyPurpose; label: (key: readonly string[]) => string }> = {
  'signing-key': { purpose: 'key-sealing', label: ([kid]) => kid ?? '' },
  'idempotent-response': { purpose: 'idempotency', label: ([clientId, reference]) => idempotentResponseLabel(clientId ?? '', reference ?? '') },
  'refresh-reuse': { purpose: 'refresh-reuse', label: ([sid]) => reuseLabel(sid ?? '') },
};

/** Every kind of sealed value, in the order a rotation goes through them. */
export const SEALED_KINDS = Object.keys(KINDS) as SealedKind[];

/** How many values of one kind a pass found in each state. */
export interface ResealCount {
  /** Sealed under the new key already (by the writing instances, or an earlier run). */
  already: number;
  /** Re-sealed by this pass. */
  resealed: number;
  /** Changed by an instance between reading and re-sealing: left as written (under the writing key). */
  changed: number;
  /** Opened by neither key (sealed under a retired key, or damaged). */
  unreadable: number;
}

/** What {@link rotateMasterKey} did. */
export interface RotationOutcome {
  /** Whether this run made the new key the writing one (`false`: an earlier run did). */
  readonly switched: boolean;
  readonly from: string;
  readonly to: string;
  readonly sealed: Record<SealedKind, ResealCount>;
  /** Clients whose secret is still hashed under another key: re-hashed at their next authentication. */
  readonly clientsOnOldKey: readonly { id: string; name: string }[];
}

const BATCH = 200;

/**
 * `master-key rotate`: with `CONNECT_MASTER_KEY` the new key and
 * `CONNECT_PREVIOUS_MASTER_KEY` the one the database writes under, makes
 * the new key the writing one (every instance follows within a second, by
 * the change signal), carrying over the sub-keys that must not change, and
 * then re-seals every sealed stored value under it, row by row.
 *
 * The switch comes first, so that no instance seals anything under the old
 * key after the pass has gone by (but one that has not yet heard the
 * switch, in its first second; run `rotate` again, or `status`, to see).
 * An interrupted run is simply run again: it finds the switch made and
 * re-seals what is left.
 *
 * @throws MasterKeyRefused without `CONNECT_PREVIOUS_MASTER_KEY`, or when it
 *   is not the key the database writes under.
 */
export async function rotateMasterKey(
  deps: MasterKeyActionDeps,
  progress: (kind: SealedKind, count: ResealCount) => void = () => {},
): Promise<RotationOutcome> {
  const { masterKeys, store, clock } = deps;
  const { current, previous } = masterKeys;
  if (!previous) {
    throw new MasterKeyRefused(
      'master-key rotate needs CONNECT_PREVIOUS_MASTER_KEY (the key being replaced) beside CONNECT_MASTER_KEY (the new one)',
    );
  }
  const records = await store.listMasterKeys();
  const writing = writingRecord(records);
  let switched = false;
  if (writing.fingerprint === previous.fingerprint) {
    await masterKeys.apply(records);
    const sealedCarried = await masterKeys.sealCarriedFor(current);
    switched = await store.switchWritingMasterKey(previous.fingerprint, current.fingerprint, sealedCarried, clock.nowSeconds());
    if (!switched) {
      const earlier = (await store.listMasterKeys()).find((r) => r.state === 'previous');
      if (earlier) {
        throw new MasterKeyRefused(
          `master key ${earlier.fingerprint} of the rotation before is still accepted: finish that replacement with master-key retire first; nothing changed`,
        );
      }
      throw new MasterKeyRefused('another master-key rotate changed the writing key meanwhile; run it again');
    }
  } else if (writing.fingerprint !== current.fingerprint || stateOf(records, previous.fingerprint) !== 'previous') {
    throw new MasterKeyRefused(
      `CONNECT_PREVIOUS_MASTER_KEY (${previous.fingerprint}) is not the master key this database writes under (${writing.fingerprint}); nothing changed`,
    );
  }
  const switchedRecords = await store.listMasterKeys();
  await masterKeys.apply(switchedRecords);
  const sealed = await resealAll(deps, progress);
  const clientsOnOldKey = await store.listClientsWithSecretsNotUnder(current.fingerprint, clock.nowSeconds(), firstOf(switchedRecords));
  return { switched, from: previous.fingerprint, to: current.fingerprint, sealed, clientsOnOldKey };
}

/**
 * Re-seals, under the new (current) key, every sealed value that opens
 * under the previous one. Each value is replaced only while it is still
 * what was read (an instance may have replaced it meanwhile, under the
 * writing key).
 */
export async function resealAll(
  deps: MasterKeyActionDeps,
  progress: (kind: SealedKind, count: ResealCount) => void = () => {},
): Promise<Record<SealedKind, ResealCount>> {
  const { masterKeys, store } = deps;
  const { current, previous } = masterKeys;
  const counts = {} as Record<SealedKind, ResealCount>;
  for (const kind of SEALED_KINDS) {
    const { purpose, label } = KINDS[kind];
    const newKey = deriveKey(current.key, purpose);
    const oldKey = previous ? deriveKey(previous.key, purpose) : undefined;
    const count: ResealCount = { already: 0, resealed: 0, changed: 0, unreadable: 0 };
    let after: readonly string[] | undefined;
    for (;;) {
      const batch: SealedValue[] = await store.listSealedValues(kind, after, BATCH);
      for (const value of batch) {
        const name = label(value.key);
        if (await opens(newKey, name, value.sealed)) {
          count.already++;
          continue;
        }
        const plaintext = oldKey ? await unseal(oldKey, name, value.sealed).catch(() => undefined) : undefined;
        if (plaintext === undefined) {
          count.unreadable++;
          continue;
        }
        const replaced = await store.replaceSealedValue(kind, value.key, value.sealed, await seal(newKey, name, plaintext));
        if (replaced) count.resealed++;
        else count.changed++;
      }
      if (batch.length > 0) progress(kind, { ...count });
      if (batch.length < BATCH) break;
      after = (batch.at(-1) as SealedValue).key;
    }
    counts[kind] = count;
  }
  return counts;
}

/** What `master-key status` shows. */
export interface MasterKeyStatus {
  readonly keys: readonly MasterKeyRecord[];
  readonly current: string;
  readonly previous: string | undefined;
  /** Sealed values of each kind not yet under the writing key (only counted when this process holds it). */
  readonly sealedOnOtherKeys: Record<SealedKind, number> | undefined;
  readonly clientsOnOtherKeys: readonly { id: string; name: string }[];
}

/**
 * `master-key status`: the keys the database knows, and how many stored
 * values still depend on a key other than the writing one, by kind.
 */
export async function masterKeyStatus(deps: MasterKeyActionDeps): Promise<MasterKeyStatus> {
  const { store, masterKeys, clock } = deps;
  const keys = await store.listMasterKeys();
  const writing = writingRecord(keys);
  const holdsWriting = [masterKeys.current, masterKeys.previous].find((k) => k?.fingerprint === writing.fingerprint);
  const sealedOnOtherKeys = holdsWriting ? await countSealedNotUnder(store, holdsWriting.key) : undefined;
  const clientsOnOtherKeys = await store.listClientsWithSecretsNotUnder(writing.fingerprint, clock.nowSeconds(), firstOf(keys));
  return { keys, current: masterKeys.current.fingerprint, previous: masterKeys.previous?.fingerprint, sealedOnOtherKeys, clientsOnOtherKeys };
}

/** How many sealed values of each kind do not open under `masterKey`'s sub-keys. */
async function countSealedNotUnder(store: MasterKeyStore, masterKey: Uint8Array): Promise<Record<SealedKind, number>> {
  const counts = {} as Record<SealedKind, number>;
  for (const kind of SEALED_KINDS) {
    const { purpose, label } = KINDS[kind];
    const key = deriveKey(masterKey, purpose);
    let other = 0;
    let after: readonly string[] | undefined;
    for (;;) {
      const batch = await store.listSealedValues(kind, after, BATCH);
      for (const value of batch) if (!(await opens(key, label(value.key), value.sealed))) other++;
      if (batch.length < BATCH) break;
      after = (batch.at(-1) as SealedValue).key;
    }
    counts[kind] = other;
  }
  return counts;
}

/** What {@link retireMasterKey} did. */
export interface RetirementOutcome {
  readonly retired: string;
  /** Values still sealed under it, re-sealed first. */
  readonly sealed: Record<SealedKind, ResealCount>;
  /** Clients whose secret was hashed under it only, and stop working now (`--force`). */
  readonly clientsCutOff: readonly { id: string; name: string }[];
}

/**
 * `master-key retire`: the previous key is no longer accepted, on every
 * instance within a second (the change signal). First re-seals what an
 * instance may still have sealed under it. Refuses while a client's secret
 * is still hashed under it only (the client would be locked out), unless
 * `force`.
 *
 * @throws MasterKeyRefused without a rotation to retire, or while secrets depend on the key.
 */
export async function retireMasterKey(deps: MasterKeyActionDeps, options: { force?: boolean | undefined } = {}): Promise<RetirementOutcome> {
  const { store, masterKeys, clock } = deps;
  const { current, previous } = masterKeys;
  const records = await store.listMasterKeys();
  const writing = writingRecord(records);
  if (writing.fingerprint !== current.fingerprint) {
    throw new MasterKeyRefused(
      `CONNECT_MASTER_KEY (${current.fingerprint}) is not the master key this database writes under (${writing.fingerprint}); run master-key rotate first`,
    );
  }
  const retiring = records.find((r) => r.state === 'previous');
  if (!retiring) throw new MasterKeyRefused('this database accepts no previous master key: there is nothing to retire');
  if (previous && previous.fingerprint !== retiring.fingerprint) {
    throw new MasterKeyRefused(`CONNECT_PREVIOUS_MASTER_KEY (${previous.fingerprint}) is not the previous master key of this database (${retiring.fingerprint})`);
  }
  if (!previous) {
    // Without the previous key nothing can be re-sealed: refuse while anything still needs it.
    // A signing or encryption key left under the retired key could never be opened again, so
    // --force does not reach it; stored responses and reuse tokens it may cut off.
    const notUnder = await countSealedNotUnder(store, current.key);
    if (notUnder['signing-key'] > 0) {
      throw new MasterKeyRefused(
        `${notUnder['signing-key']} signing or encryption key(s) are not yet under the writing master key; run master-key retire with CONNECT_PREVIOUS_MASTER_KEY set, so that they are re-sealed first`,
      );
    }
    const left = Object.values(notUnder).reduce((sum, n) => sum + n, 0);
    if (left > 0 && !options.force) {
      throw new MasterKeyRefused(
        `${left} sealed value(s) are not yet under the writing master key; run master-key retire with CONNECT_PREVIOUS_MASTER_KEY set, so that they are re-sealed first (or --force)`,
      );
    }
  }
  const sealed = previous ? await resealAll(deps) : emptyCounts();
  const clients = await store.listClientsWithSecretsNotUnder(current.fingerprint, clock.nowSeconds(), firstOf(records));
  if (clients.length > 0 && !options.force) {
    const names = clients.slice(0, 5).map((c) => `${c.id} (${c.name})`).join(', ');
    const more = clients.length > 5 ? ` and ${clients.length - 5} more` : '';
    throw new MasterKeyRefused(
      `${clients.length} client secret(s) are still hashed under the previous master key: ${names}${more}; ` +
        'they move at their next authentication (or clients rotate-secret); --force cuts them off',
    );
  }
  const guard = options.force ? undefined : { fingerprint: current.fingerprint, firstFingerprint: firstOf(records) };
  if (!(await store.retireMasterKey(retiring.fingerprint, clock.nowSeconds(), guard))) {
    // A client was given a secret under the old key meanwhile (or another retire won): nothing changed.
    const late = await store.listClientsWithSecretsNotUnder(current.fingerprint, clock.nowSeconds(), firstOf(records));
    throw new MasterKeyRefused(
      late.length > 0
        ? `${late.length} client secret(s) were hashed under the previous master key meanwhile (${late.slice(0, 5).map((c) => c.id).join(', ')}); run master-key retire again, or --force`
        : `master key ${retiring.fingerprint} is no longer the previous key (another master-key retire ran meanwhile)`,
    );
  }
  return { retired: retiring.fingerprint, sealed, clientsCutOff: clients };
}

function writingRecord(records: readonly MasterKeyRecord[]): MasterKeyRecord {
  const writing = records.find((r) => r.state === 'writing');
  if (!writing) throw new MasterKeyRefused('this database records no master key yet: run connect-auth migrate first');
  return writing;
}

function stateOf(records: readonly MasterKeyRecord[], fingerprint: string): string | undefined {
  return records.find((r) => r.fingerprint === fingerprint)?.state;
}

async function opens(key: Uint8Array, label: string, sealed: string): Promise<boolean> {
  return unseal(key, label, sealed).then(
    () => true,
    () => false,
  );
}

function emptyCounts(): Record<SealedKind, ResealCount> {
  return Object.fromEntries(SEALED_KINDS.map((k) => [k, { already: 0, resealed: 0, changed: 0, unreadable: 0 }])) as Record<SealedKind, ResealCount>;
}

/** The database's first master key (bare client secret hashes were made under it). */
function firstOf(records: readonly MasterKeyRecord[]): string {
  const first = firstMasterKey(records);
  if (first === undefined) throw new MasterKeyRefused('the database records no master key yet: run connect-auth migrate first');
  return first;
}

/**
 * Whether `masterKey` opens the database's stored signing and encryption
 * keys (true when there are none yet): checked before a database that
 * knows no master key records its first, so that a wrong key is never
 * recorded as the one it writes under.
 */
export async function opensStoredKeys(store: Pick<MasterKeyStore, 'listSealedValues'>, masterKey: Uint8Array): Promise<boolean> {
  const [first] = await store.listSealedValues('signing-key', undefined, 1);
  if (!first) return true;
  const { purpose, label } = KINDS['signing-key'];
  return opens(deriveKey(masterKey, purpose), label(first.key), first.sealed);
}
