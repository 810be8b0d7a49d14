import { userInfo } from 'node:os';
import { describe, expect, it } from 'vitest';
import { auditActor, type Actor } from '../../../src/core/audit/audit-actor.js';
import { MANY_ADDRESSES_ACTOR } from '../../../src/core/audit/client-auth-failures.js';
import { cliActor } from '../../../src/cli/commands/audit-actor.js';

describe('auditActor', () => {
  it.each<[Actor, string]>([
    [{ kind: 'operator', name: 'ops' }, 'cli:ops'],
    [{ kind: 'operator', name: 'unknown' }, 'cli:unknown'],
    [{ kind: 'client', clientId: 'shop-web' }, 'client:shop-web'],
    [{ kind: 'address', ip: '203.0.113.7' }, 'ip:203.0.113.7'],
    [{ kind: 'address', ip: '2001:db8::1' }, 'ip:2001:db8::1'],
    [{ kind: 'address', ip: 'unknown' }, 'ip:unknown'],
    [{ kind: 'address', ip: '*' }, 'ip:*'],
    [{ kind: 'system' }, 'system'],
  ])('stores %o as %s', (actor, stored) => {
    expect(auditActor(actor)).toBe(stored);
  });

  it('names many addresses ip:*, and the command line cli:<system user>', () => {
    expect(MANY_ADDRESSES_ACTOR).toBe('ip:*');
    expect(cliActor()).toBe(`cli:${userInfo().username}`);
  });
});
