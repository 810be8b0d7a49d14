import { describe, expect, it } from 'vitest';
import { localChangeFeed, type Change } from '../../../src/core/changes/change-feed.js';
import { cacheClientLookup } from '../../../src/core/clients/cached-client-lookup.js';
import type { Client } from '../../../src/core/clients/client.js';

describe('cacheClientLookup', () => {
  it('serves a client from memory until a change of it is heard, then reads again', async () => {
    const feed = localChangeFeed();
    let reads = 0;
    let status: Client['status'] = 'active';
    const find = cacheClientLookup(async (id) => {
      reads++;
      return { id, status } as Client;
    }, feed);
    expect((await find('a'))?.status).toBe('active');
    status = 'disabled';
    expect((await find('a'))?.status).toBe('active');
    feed.heard({ kind: 'client', key: 'b' });
    feed.heard({ kind: 'session', key: 'a' });
    expect((await find('a'))?.status).toBe('active');
    expect(reads).toBe(1);
    feed.heard({ kind: 'client', key: 'a' });
    expect((await find('a'))?.status).toBe('disabled');
    expect(reads).toBe(2);
  });

  it('forgets everything when the feed says changes may have been missed', async () => {
    const feed = localChangeFeed();
    let reads = 0;
    const find = cacheClientLookup(async (id) => {
      reads++;
      return { id } as Client;
    }, feed);
    await find('a');
    await find('b');
    for (const listener of [feed]) listener.heard({ kind: 'keys', key: '' });
    await find('a');
    expect(reads).toBe(2);
    // 'all' is what a feed sends after a lapse.
    (feed as unknown as { heard(h: unknown): void }).heard('all');
    await find('a');
    await find('b');
    expect(reads).toBe(4);
  });

  it('does not keep what a read returned when a change of that client was heard during the read', async () => {
    const feed = localChangeFeed();
    let reads = 0;
    let release: () => void = () => {};
    const find = cacheClientLookup(async (id) => {
      reads++;
      if (reads === 1) await new Promise<void>((resolve) => (release = resolve));
      return { id, status: reads === 1 ? 'active' : 'disabled' } as Client;
    }, feed);
    const first = find('a');
    await Promise.resolve();
    feed.heard({ kind: 'client', key: 'a' });
    release();
    expect((await first)?.status).toBe('active');
    expect((await find('a'))?.status).toBe('disabled');
    expect(reads).toBe(2);
  });

  it('does not keep a read when the feed delivers a change of that client as the read ends', async () => {
    // As SQLite's feed does: pending changes are delivered when it is asked whether it is current.
    const base = localChangeFeed();
    const queued: Change[] = [];
    const feed = { ...base, isCurrent: () => (queued.splice(0).forEach((c) => base.heard(c)), true) };
    let reads = 0;
    const find = cacheClientLookup(async (id) => {
      reads++;
      // Another process changes the client right after this read.
      if (reads === 1) queued.push({ kind: 'client', key: id });
      return { id, status: reads === 1 ? 'active' : 'disabled' } as Client;
    }, feed);
    expect((await find('a'))?.status).toBe('active');
    expect((await find('a'))?.status).toBe('disabled');
    expect(reads).toBe(2);
  });

  it('never caches an unknown client', async () => {
    let reads = 0;
    const find = cacheClientLookup(async () => {
      reads++;
      return undefined;
    }, localChangeFeed());
    await find('x');
    await find('x');
    expect(reads).toBe(2);
  });
});
