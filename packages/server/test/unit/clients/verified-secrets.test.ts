import { describe, expect, it } from 'vitest';
import { ClientSecretHasher } from '../../../src/core/clients/client-secret.js';
import { rememberVerifiedSecrets } from '../../../src/core/clients/verified-secrets.js';
import { fixedClock } from '../../../src/core/clock.js';
import { SECRET_MEMORY_SECONDS } from '../../../src/core/lifetimes.js';

const hasher = new ClientSecretHasher(new Uint8Array(32).fill(9));
const SECRET = 'csk_sandbox_' + 'a'.repeat(43);
const HASH = hasher.hash(SECRET);

/** The real hasher, counting the HMAC verifications it is asked for. */
function setup(maxEntries?: number) {
  const clock = fixedClock(1_800_000_000);
  const counted = {
    hmacs: 0,
    verify(secret: string, storedHash: string) {
      counted.hmacs += 1;
      return hasher.verify(secret, storedHash);
    },
  };
  const secrets = rememberVerifiedSecrets(counted, clock, SECRET_MEMORY_SECONDS, maxEntries);
  return { clock, counted, secrets };
}

describe('rememberVerifiedSecrets', () => {
  it('recognises a secret that verified without a new HMAC for the client cache time, then checks it again', () => {
    const { clock, counted, secrets } = setup();
    expect(secrets.verify(SECRET, HASH)).toBe(true);
    expect(counted.hmacs).toBe(1);

    clock.advance(SECRET_MEMORY_SECONDS - 1);
    expect(secrets.verify(SECRET, HASH)).toBe(true);
    expect(secrets.verify(SECRET, HASH)).toBe(true);
    expect(counted.hmacs).toBe(1);

    // Using it did not extend it: at the cache time it is checked by the HMAC again.
    clock.advance(1);
    expect(secrets.verify(SECRET, HASH)).toBe(true);
    expect(counted.hmacs).toBe(2);
    expect(secrets.verify(SECRET, HASH)).toBe(true);
    expect(counted.hmacs).toBe(2);
  });

  it('checks every wrong secret with the HMAC, whether or not a right one is remembered, and remembers none', () => {
    const { counted, secrets } = setup();
    const wrongSameLength = 'csk_sandbox_' + 'b'.repeat(43);
    expect(secrets.verify(wrongSameLength, HASH)).toBe(false);
    expect(secrets.verify(wrongSameLength, HASH)).toBe(false);
    expect(counted.hmacs).toBe(2);

    expect(secrets.verify(SECRET, HASH)).toBe(true);
    expect(counted.hmacs).toBe(3);
    for (const wrong of [wrongSameLength, 'short', SECRET + 'x', '', SECRET.toUpperCase()]) {
      expect(secrets.verify(wrong, HASH)).toBe(false);
    }
    expect(counted.hmacs).toBe(8);
    // The right one is still recognised without an HMAC.
    expect(secrets.verify(SECRET, HASH)).toBe(true);
    expect(counted.hmacs).toBe(8);
  });

  it('remembers a secret for the stored hash it verified against only: after a rotation the old secret fails against the new hash', () => {
    const { secrets } = setup();
    const newSecret = 'csk_sandbox_' + 'n'.repeat(43);
    const newHash = hasher.hash(newSecret);
    expect(secrets.verify(SECRET, HASH)).toBe(true);
    expect(secrets.verify(SECRET, newHash)).toBe(false);
    expect(secrets.verify(newSecret, newHash)).toBe(true);
    expect(secrets.verify(newSecret, HASH)).toBe(false);
    // During a grace period the caller still checks the previous hash: the old secret verifies there.
    expect(secrets.verify(SECRET, HASH)).toBe(true);
  });

  it('never recognises a secret past its time, even after the clock stepped back', () => {
    const { clock, counted, secrets } = setup();
    const other = 'csk_sandbox_' + 'o'.repeat(43);
    const otherHash = hasher.hash(other);
    expect(secrets.verify(SECRET, HASH)).toBe(true);
    // The clock steps back an hour: this secret is remembered behind one that ends later.
    clock.advance(-3600);
    expect(secrets.verify(other, otherHash)).toBe(true);
    expect(counted.hmacs).toBe(2);
    clock.advance(SECRET_MEMORY_SECONDS);
    expect(secrets.verify(other, otherHash)).toBe(true);
    expect(counted.hmacs).toBe(3);
  });

  it('holds at most the given number of secrets, dropping the oldest', () => {
    const { counted, secrets } = setup(2);
    const clients = ['a', 'b', 'c'].map((letter) => {
      const secret = 'csk_sandbox_' + letter.repeat(43);
      return { secret, hash: hasher.hash(secret) };
    });
    for (const { secret, hash } of clients) expect(secrets.verify(secret, hash)).toBe(true);
    expect(counted.hmacs).toBe(3);
    // b and c are remembered; a was dropped to make room for c.
    expect(secrets.verify(clients[1]!.secret, clients[1]!.hash)).toBe(true);
    expect(secrets.verify(clients[2]!.secret, clients[2]!.hash)).toBe(true);
    expect(counted.hmacs).toBe(3);
    expect(secrets.verify(clients[0]!.secret, clients[0]!.hash)).toBe(true);
    expect(counted.hmacs).toBe(4);
  });
});
