import { deriveKey, masterKeyFingerprint, seal, unseal, type KeyPurpose } from './master-key.js';
import type { MasterKeyRecord } from './master-key-store.js';

/**
 * The sub-keys of one purpose as they stand now: the one new values are
 * made under, and every one a value may have been made under (the writing
 * one first). A live view: it follows {@link MasterKeys.apply}.
 */
export interface SubKeys {
  /** The sub-key that seals, hashes or signs anything new. */
  readonly writing: Uint8Array;
  /** The fingerprint of the master key {@link writing} is derived from. */
  readonly writingFingerprint: string;
  /** Every sub-key accepted, the writing one first; each with its master key's fingerprint. */
  readonly accepted: readonly AcceptedSubKey[];
  /**
   * The fingerprint of the database's first master key, whose client
   * secret hashes are stored without a fingerprint (as every release before
   * master-key replacement stored them, so that those releases, running
   * beside this one, read what it writes; docs/upgrades.md).
   */
  readonly firstFingerprint: string;
}

/** One accepted sub-key and the fingerprint of the master key it is derived from. */
export interface AcceptedSubKey {
  readonly key: Uint8Array;
  readonly fingerprint: string;
}

/** A sub-key that never changes: tests, and anything made from one master key only. */
export function fixedSubKeys(key: Uint8Array, fingerprint = 'fixed'): SubKeys {
  const accepted = [{ key, fingerprint }];
  return { writing: key, writingFingerprint: fingerprint, accepted, firstFingerprint: fingerprint };
}

/** `keys` as {@link SubKeys}: a single key becomes one that never changes. */
export function asSubKeys(keys: SubKeys | Uint8Array): SubKeys {
  return keys instanceof Uint8Array ? fixedSubKeys(keys) : keys;
}

/**
 * The fingerprint of the database's first master key: the one recorded
 * before any rotation, which carries no sub-keys from a key before it.
 */
export function firstMasterKey(records: readonly MasterKeyRecord[]): string | undefined {
  return records.find((r) => r.state !== 'next' && r.sealedCarried === null)?.fingerprint;
}

/** A start that cannot go on: the configured master keys do not fit the database. */
export class MasterKeyMismatch extends Error {
  override readonly name = 'MasterKeyMismatch';
}

/** The sub-keys carried from the first master key on, across rotations (see {@link MasterKeys}). */
export type CarriedPurpose = 'rate-limit-keys' | 'sandbox-demo' | 'csrf';
const CARRIED: readonly CarriedPurpose[] = ['rate-limit-keys', 'sandbox-demo', 'csrf'];
const CARRIED_LABEL = 'carried-sub-keys';

/** A configured master key and its fingerprint. */
export interface ConfiguredMasterKey {
  readonly key: Uint8Array;
  readonly fingerprint: string;
}

/**
 * The master keys one process holds (`CONNECT_MASTER_KEY` and, while the
 * master key is replaced, `CONNECT_PREVIOUS_MASTER_KEY`) and what the
 * database says of them (docs/operator-guide.md, "Replacing the master key"):
 * which one writes and which are still accepted. Read at start and again on
 * the change signal, never on a request.
 *
 * Three purposes are carried instead of re-derived: the key of rate-limit
 * counter names (a new key would give every mobile and address a fresh
 * budget), the sandbox demo's credentials, and the key that binds a form's
 * CSRF token to its browser (the token's strength is the browser's random
 * cookie secret, which the key alone does not give; a new key would refuse
 * every form open at the switch). A rotation seals them under the new key,
 * so they stay what the database's first key made them.
 */
export class MasterKeys {
  readonly current: ConfiguredMasterKey;
  readonly previous: ConfiguredMasterKey | undefined;
  #writing: ConfiguredMasterKey;
  #accepted: ConfiguredMasterKey[];
  #carried: Partial<Record<CarriedPurpose, Uint8Array>> = {};
  #first: string | undefined;
  readonly #derived = new Map<string, Uint8Array>();
  /** The accepted sub-keys of each purpose, made once per change (they are read on every request). */
  readonly #acceptedOf = new Map<KeyPurpose, readonly AcceptedSubKey[]>();
  readonly #views = new Map<KeyPurpose, SubKeys>();
  readonly #listeners = new Set<() => void>();

  constructor(current: Uint8Array, previous?: Uint8Array) {
    this.current = { key: current, fingerprint: masterKeyFingerprint(current) };
    this.previous = previous ? { key: previous, fingerprint: masterKeyFingerprint(previous) } : undefined;
    // Until the database says otherwise: the only key, or the one being replaced.
    this.#writing = this.previous ?? this.current;
    this.#accepted = this.previous ? [this.previous, this.current] : [this.current];
  }

  /** The fingerprint of the master key new values are made under. */
  get writingFingerprint(): string {
    return this.#writing.fingerprint;
  }

  /** The fingerprints accepted now, the writing one first. */
  get acceptedFingerprints(): readonly string[] {
    return this.#accepted.map((k) => k.fingerprint);
  }

  /** The sub-keys of `purpose`, following every later {@link apply}. */
  subKeys(purpose: KeyPurpose): SubKeys {
    let view = this.#views.get(purpose);
    if (!view) {
      const self = this;
      view = {
        get writing() {
          return self.#derive(self.#writing, purpose);
        },
        get writingFingerprint() {
          return self.#writing.fingerprint;
        },
        get firstFingerprint() {
          return self.#first ?? self.#writing.fingerprint;
        },
        get accepted() {
          let accepted = self.#acceptedOf.get(purpose);
          if (!accepted) {
            accepted = self.#accepted.map((k) => ({ key: self.#derive(k, purpose), fingerprint: k.fingerprint }));
            self.#acceptedOf.set(purpose, accepted);
          }
          return accepted;
        },
      };
      this.#views.set(purpose, view);
    }
    return view;
  }

  /** A carried sub-key: the one the first master key derived, however many rotations ago. */
  carried(purpose: CarriedPurpose): Uint8Array {
    return this.#carried[purpose] ?? this.#derive(this.#writing, purpose);
  }

  /**
   * Takes the database's records: which configured key writes, which are
   * still accepted, and the carried sub-keys. Tells the listeners when
   * anything changed. Whether the configured keys may start at all is
   * checked once, at start ({@link checkConfiguredKeys}); a running process
   * whose key is retired under it keeps what it has (it is to be rolled).
   */
  async apply(records: readonly MasterKeyRecord[]): Promise<void> {
    const state = new Map(records.map((r) => [r.fingerprint, r]));
    const configured = this.previous ? [this.current, this.previous] : [this.current];
    const writingRecord = records.find((r) => r.state === 'writing');
    // A database that writes under a key this process does not hold (it was
    // not given the new key before the rotation): the current one is all it has.
    const writing = configured.find((k) => k.fingerprint === writingRecord?.fingerprint) ?? this.current;
    const accepted = [writing, ...configured.filter((k) => k !== writing && state.get(k.fingerprint)?.state !== 'retired')];
    const carried = writingRecord?.fingerprint === writing.fingerprint ? await openCarried(writing, writingRecord?.sealedCarried ?? null) : {};
    const changed =
      writing !== this.#writing || accepted.length !== this.#accepted.length || accepted.some((k, i) => k !== this.#accepted[i]);
    this.#first = firstMasterKey(records) ?? this.#first;
    this.#writing = writing;
    this.#accepted = accepted;
    this.#carried = carried;
    if (changed) this.#acceptedOf.clear();
    if (changed) for (const listener of this.#listeners) listener();
  }

  /** Calls `listener` whenever the writing or accepted keys change; returns how to stop. */
  onChange(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * The carried sub-keys sealed for the record of `to`: what the writing key
   * carries now (or derives, when it carries none), sealed under `to`.
   */
  async sealCarriedFor(to: ConfiguredMasterKey): Promise<string> {
    const values = Object.fromEntries(CARRIED.map((p) => [p, Buffer.from(this.carried(p)).toString('base64url')]));
    return seal(deriveKey(to.key, 'key-sealing'), CARRIED_LABEL, JSON.stringify(values));
  }

  #derive(master: ConfiguredMasterKey, purpose: KeyPurpose): Uint8Array {
    const id = `${master.fingerprint} ${purpose}`;
    let key = this.#derived.get(id);
    if (!key) {
      key = deriveKey(master.key, purpose);
      this.#derived.set(id, key);
    }
    return key;
  }
}

async function openCarried(master: ConfiguredMasterKey, sealed: string | null): Promise<Partial<Record<CarriedPurpose, Uint8Array>>> {
  if (sealed === null) return {};
  const values = JSON.parse(await unseal(deriveKey(master.key, 'key-sealing'), CARRIED_LABEL, sealed)) as Record<string, string>;
  const carried: Partial<Record<CarriedPurpose, Uint8Array>> = {};
  for (const purpose of CARRIED) {
    const value = values[purpose];
    if (value) carried[purpose] = new Uint8Array(Buffer.from(value, 'base64url'));
  }
  return carried;
}

/**
 * Refuses configured master keys that do not fit the database: a retired
 * current key, or a key the database does not know (neither the writing
 * nor another one it still accepts). A current key it does not know yet is
 * fine beside a known previous one: that is how a replacement begins.
 */
export function checkConfiguredKeys(records: readonly MasterKeyRecord[], current: string, previous: string | undefined): void {
  if (records.length === 0) return;
  const state = new Map(records.map((r) => [r.fingerprint, r.state]));
  const writing = records.find((r) => r.state === 'writing')?.fingerprint ?? '?';
  const known = (fp: string) => state.has(fp) && state.get(fp) !== 'retired';
  if (state.get(current) === 'retired') {
    throw new MasterKeyMismatch(`CONNECT_MASTER_KEY (${current}) was retired; this database writes under master key ${writing}`);
  }
  if (previous !== undefined) {
    if (state.get(previous) === undefined) {
      throw new MasterKeyMismatch(`CONNECT_PREVIOUS_MASTER_KEY (${previous}) is not a master key of this database; it writes under ${writing}`);
    }
    if (!known(current) && !known(previous)) {
      throw new MasterKeyMismatch(`neither CONNECT_MASTER_KEY (${current}) nor CONNECT_PREVIOUS_MASTER_KEY is accepted by this database; it writes under ${writing}`);
    }
    if (state.get(current) !== 'writing' && state.get(previous) !== 'writing') {
      throw new MasterKeyMismatch(
        `neither CONNECT_MASTER_KEY (${current}) nor CONNECT_PREVIOUS_MASTER_KEY (${previous}) is the master key this database writes under (${writing})`,
      );
    }
    return;
  }
  if (!known(current)) {
    throw new MasterKeyMismatch(
      `CONNECT_MASTER_KEY (${current}) is not a master key of this database, which writes under ${writing} (to replace the key, set CONNECT_PREVIOUS_MASTER_KEY too)`,
    );
  }
  // Alone, the key must be the writing one: a `next` key would seal what servers holding only the
  // writing key cannot open, and a `previous` one (a server rolled back after a rotation) cannot
  // open what the rotation re-sealed.
  if (state.get(current) === 'next') {
    throw new MasterKeyMismatch(
      `CONNECT_MASTER_KEY (${current}) is not yet the writing master key (${writing}): set CONNECT_PREVIOUS_MASTER_KEY to the writing key too until master-key rotate`,
    );
  }
  if (state.get(current) === 'previous') {
    throw new MasterKeyMismatch(
      `CONNECT_MASTER_KEY (${current}) was replaced by master-key rotate; this database writes under ${writing}: configure that key`,
    );
  }
}

/**
 * Opens a value sealed by `seal()` under any of the accepted sub-keys, the
 * writing one first. Throws the writing key's error when none opens it.
 */
export async function unsealAccepted(keys: SubKeys | Uint8Array, label: string, sealed: string): Promise<string> {
  let first: unknown;
  for (const { key } of asSubKeys(keys).accepted) {
    try {
      return await unseal(key, label, sealed);
    } catch (error) {
      first ??= error;
    }
  }
  throw first;
}
