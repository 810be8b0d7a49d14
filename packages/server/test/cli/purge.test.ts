import { describe, expect, it } from 'vitest';
import { T0 } from '../helpers/build.js';
import { cliWorkspace, expectFailure } from './command-line.js';

/** `connect-auth purge`: what has expired goes, in batches, with a count of each. */

const code = (codeHash: string, expiresAt: number) => ({
  codeHash,
  clientId: 'cid_sandbox_x',
  redirectUri: 'https://shop.example/callback',
  profileId: '123456789012',
  codeChallenge: null,
  createdAt: T0,
  expiresAt,
  consumedAt: null,
  scopes: [],
  authentication: null,
});

describe('connect-auth purge', () => {
  it('deletes what has expired and old audit events, and says how many of each', async () => {
    const w = cliWorkspace({ env: { CONNECT_AUDIT_RETENTION_DAYS: '2' } });
    expect((await w.cli(['migrate'])).code).toBe(0);
    const storage = await w.storage();
    await storage.codes.insertAuthorizationCode(code('expired', T0 + 300));
    await storage.codes.insertAuthorizationCode(code('live', T0 + 2 * 86_400 + 1));
    for (const [id, at] of [['old', T0 - 1], ['kept', T0]] as const) {
      await storage.audit.insertAuditEvent({ id, at, type: 'client.created', actor: 'cli:x', subject: null, outcome: 'success' });
    }
    w.clock.set(T0 + 2 * 86_400);
    const result = await w.cliJson<{ deleted: Record<string, number> }>(['purge']);
    expect(result.deleted).toEqual({
      authorizationCodes: 1,
      authorizationRequests: 0,
      customerSessions: 0,
      otpChallenges: 0,
      webauthnChallenges: 0,
      usedJtis: 0,
      pushedRequests: 0,
      tokenSessions: 0,
      revokedTokens: 0,
      idempotentRequests: 0,
      rateLimitCounters: 0,
      smsOutbox: 0,
      auditEvents: 1,
    });
    expect(await storage.codes.findAuthorizationCode('live')).toBeDefined();
    expect((await w.auditEvents()).map((e) => e.id)).toEqual(['kept']);

    const again = await w.cli(['purge']);
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/^authorization codes: +0$/m);
    expect(again.stdout).toMatch(/^audit events: +0$/m);
    expect(again.stdout.trim().split('\n')).toHaveLength(13);
  });

  it('refuses arguments and a bad retention, changing nothing', async () => {
    const w = cliWorkspace();
    expect(expectFailure(await w.cli(['purge', 'now']), 2)).toMatch(/too many arguments for purge/);
    expect(expectFailure(await w.cli(['purge'], { CONNECT_AUDIT_RETENTION_DAYS: '0' }), 1)).toMatch(/CONNECT_AUDIT_RETENTION_DAYS must be between 1/);
    expect(expectFailure(await w.cli(['purge'], { CONNECT_AUDIT_RETENTION_DAYS: '1.5' }), 1)).toMatch(/whole number/);
  });

  it('answers --help', async () => {
    const w = cliWorkspace();
    const help = await w.cli(['purge', '--help']);
    expect(help).toMatchObject({ code: 0, stderr: '' });
    expect(help.stdout).toMatch(/^Usage: connect-auth purge \[options\]\n\ndelete what has expired/);
    expect((await w.cli(['--help'])).stdout).toMatch(/^ {2}purge +delete what has expired/m);
  });
});
