import { describe, expect, it } from 'vitest';
import type { LimitName } from '../../../src/core/journey/outcomes.js';
import { limitNote } from '../../../src/http/views/limit-notes.js';
import { build, type TestApp } from '../../helpers/build.js';
import { addCustomers, authorizeParams, authorizeUrl, Browser, expectPage, MOBILE, nthMobile, OTHER_MOBILE, pageText, PIN, startLogin, type Response } from '../../helpers/customer-flow.js';

/**
 * Every limit page of the hosted login names, in the sandbox only, what
 * sets the limit that refused (docs/journey.md, "Limits in the sandbox");
 * production pages never name a variable.
 */

const WRONG_PIN = '000000';

interface LimitCase {
  readonly limit: LimitName;
  /** Configuration that makes the limit small enough to reach. */
  readonly env: Readonly<Record<string, string>>;
  /** What the page names: the variable, or the fixed rule. */
  readonly names: RegExp;
  /** Drives the app until it refuses; returns the refusal. */
  reach(t: TestApp, client: { id: string }): Promise<Response>;
}

const login = async (t: TestApp, client: { id: string }, mobile: string, pin: string, remoteAddress = '192.0.2.10') => {
  const browser = new Browser(t.app, { remoteAddress });
  const { page } = await startLogin(browser, authorizeParams(client));
  return browser.submit(page, { mobile, pin, action: 'login' });
};

/** "Forgot PIN?" for `mobile` from one browser, `times` times; the last answer. */
const resets = async (t: TestApp, client: { id: string }, mobile: string, times: number) => {
  let res: Response | undefined;
  for (let i = 0; i < times; i++) {
    const browser = new Browser(t.app, { remoteAddress: '192.0.2.20' });
    const { requestId } = await startLogin(browser, authorizeParams(client));
    const page = await browser.open(`/login/reset?request=${requestId}`);
    res = await browser.submit(page, { mobile, action: 'send' });
  }
  return res as Response;
};

const CASES: readonly LimitCase[] = [
  {
    limit: 'sms_per_mobile',
    env: { CONNECT_SMS_LIMIT_PER_MOBILE: '1' },
    names: /CONNECT_SMS_LIMIT_PER_MOBILE/,
    reach: async (t, client) => {
      await login(t, client, MOBILE, PIN, '192.0.2.1');
      return login(t, client, MOBILE, PIN, '192.0.2.2');
    },
  },
  {
    limit: 'sms_per_address',
    env: { CONNECT_SMS_LIMIT_PER_ADDRESS: '1' },
    names: /CONNECT_SMS_LIMIT_PER_ADDRESS/,
    reach: async (t, client) => {
      await login(t, client, MOBILE, PIN);
      return login(t, client, OTHER_MOBILE, PIN);
    },
  },
  {
    limit: 'sms_global',
    env: { CONNECT_SMS_LIMIT_GLOBAL: '1' },
    names: /CONNECT_SMS_LIMIT_GLOBAL/,
    reach: async (t, client) => {
      await login(t, client, MOBILE, PIN, '192.0.2.1');
      return login(t, client, OTHER_MOBILE, PIN, '192.0.2.2');
    },
  },
  {
    limit: 'pin_per_address',
    env: { CONNECT_PIN_LIMIT_PER_ADDRESS: '1' },
    names: /CONNECT_PIN_LIMIT_PER_ADDRESS/,
    reach: async (t, client) => {
      await login(t, client, MOBILE, WRONG_PIN);
      return login(t, client, OTHER_MOBILE, WRONG_PIN);
    },
  },
  {
    limit: 'pin_lock',
    env: {},
    names: /5 wrong PINs in a row lock PIN login for 15 minutes, a fixed rule that no variable sets; connect-auth customers unlock lifts the lock/,
    reach: async (t, client) => {
      for (let i = 0; i < 5; i++) await login(t, client, MOBILE, WRONG_PIN, `192.0.2.${i + 1}`);
      return login(t, client, MOBILE, PIN, '192.0.2.99');
    },
  },
  {
    limit: 'reset_sms_per_requester',
    env: {},
    names: /3 unsolicited codes \(PIN resets and registrations\) to one mobile number from one client address per hour, a fixed rule/,
    reach: (t, client) => resets(t, client, MOBILE, 4),
  },
  {
    limit: 'journey_per_address',
    env: { CONNECT_JOURNEY_LIMIT_PER_ADDRESS: '1' },
    names: /CONNECT_JOURNEY_LIMIT_PER_ADDRESS/,
    reach: async (t, client) => {
      const browser = new Browser(t.app, { remoteAddress: '192.0.2.30' });
      await browser.get(authorizeUrl(authorizeParams(client)));
      return browser.get(authorizeUrl(authorizeParams(client)));
    },
  },
];

describe('limit pages name what sets the limit, in the sandbox only', () => {
  it.each(CASES.map((c) => [c.limit, c] as const))('%s', async (_name, c) => {
    for (const environment of ['sandbox', 'production'] as const) {
      const t = await build({ environment, env: c.env });
      const client = await t.createClient();
      await addCustomers(t, [MOBILE, OTHER_MOBILE]);
      const refused = await c.reach(t, client);
      expectPage(refused, refused.statusCode === 429 ? 429 : 400);
      const text = pageText(refused.body);
      if (environment === 'sandbox') {
        expect(text).toMatch(c.names);
        expect(text).toContain(limitNote(c.limit, true));
      } else {
        expect(text).not.toMatch(/CONNECT_|Sandbox:|connect-auth|fixed rule/);
      }
    }
  });

  it('every limit has a sandbox note, which names a CONNECT_ variable or says the rule is fixed; none outside the sandbox', () => {
    const limits: readonly LimitName[] = [
      'sms_per_mobile',
      'sms_per_address',
      'sms_global',
      'pin_per_address',
      'journey_per_address',
      'pin_lock',
      'otp_per_mobile',
      'reset_sms_per_requester',
      'reset_otp_per_address',
    ];
    for (const limit of limits) {
      expect(limitNote(limit, true)).toMatch(/^Sandbox: .*(?:set by CONNECT_[A-Z_]+|a fixed rule that no variable sets)/);
      expect(limitNote(limit, false)).toBeUndefined();
    }
  });
});

describe('the sandbox per mobile (CONNECT_SMS_LIMIT_PER_MOBILE)', () => {
  it('sandbox: one demo customer logs in 12 times within 15 minutes, a code each time; production refuses the 6th code', { timeout: 120_000 }, async () => {
    for (const [environment, sent] of [
      ['sandbox', 12],
      ['production', 5],
    ] as const) {
      const t = await build({ environment });
      const client = await t.createClient();
      await addCustomers(t, [nthMobile(0)]);
      const answers: number[] = [];
      for (let i = 0; i < 12; i++) answers.push((await login(t, client, nthMobile(0), PIN, `192.0.2.${i + 1}`)).statusCode);
      expect(answers.filter((status) => status === 303)).toHaveLength(sent);
      expect(answers.slice(sent).every((status) => status === 400)).toBe(true);
    }
  });
});
