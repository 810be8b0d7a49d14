import { describe, expect, it } from 'vitest';
import { cacheClientLookup } from '../../../src/core/clients/cached-client-lookup.js';
import type { Client } from '../../../src/core/clients/client.js';
import { fixedClock } from '../../../src/core/clock.js';
import { CLIENT_CACHE_SECONDS } from '../../../src/core/lifetimes.js';

describe('cacheClientLookup', () => {
  it('serves a client from memory for the cache time, then reads again', async () => {
    const clock = fixedClock(1000);
    let reads = 0;
    let status: Client['status'] = 'active';
    const find = cacheClientLookup(async (id) => {
      reads++;
      return { id, status } as Client;
    }, clock);
    expect((await find('a'))?.status).toBe('active');
    status = 'disabled';
    clock.advance(CLIENT_CACHE_SECONDS - 1);
    expect((await find('a'))?.status).toBe('active');
    expect(reads).toBe(1);
    clock.advance(1);
    expect((await find('a'))?.status).toBe('disabled');
    expect(reads).toBe(2);
  });

  it('never caches an unknown client', async () => {
    const clock = fixedClock(1000);
    let reads = 0;
    const find = cacheClientLookup(async () => {
      reads++;
      return undefined;
    }, clock);
    await find('x');
    await find('x');
    expect(reads).toBe(2);
  });
});
