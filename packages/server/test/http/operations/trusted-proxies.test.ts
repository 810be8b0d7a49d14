import { describe, expect, it } from 'vitest';
import { build } from '../../helpers/build.js';
import { addCustomer, authorizeParams, Browser, csrfToken, formAction, MOBILE, pageText, startLogin } from '../../helpers/customer-flow.js';

/**
 * The client address behind proxies (docs/journey.md, "PIN guessing"): the
 * right-most address of `X-Forwarded-For` that is not a trusted proxy. A
 * client can put anything at the left of the header, and that never changes
 * whose budget its PIN checks spend.
 */

const PROXY = '10.0.0.7';
const CUSTOMER_ADDRESS = '203.0.113.50';
const WRONG_PIN = '000000';

/** Posts a wrong PIN through the proxy, with a forged left-most hop; returns the page's text. */
async function wrongPinThroughProxy(browser: Browser, client: { id: string }, forged: string): Promise<string> {
  const { page } = await startLogin(browser, authorizeParams(client, { user_id: MOBILE }));
  const res = await browser.request({
    method: 'POST',
    url: formAction(page.body),
    body: { csrf_token: csrfToken(page.body), mobile: MOBILE, pin: WRONG_PIN, action: 'login' },
    headers: { 'x-forwarded-for': `${forged}, ${CUSTOMER_ADDRESS}` },
  });
  return pageText(res.body);
}

describe.each([
  ['one proxy, by hop count', '1'],
  ['the proxies by CIDR range', '10.0.0.0/8, 192.0.2.1'],
])('CONNECT_TRUST_PROXY: %s', (_name, trustProxy) => {
  it('counts the PIN checks of the address the proxy saw, whatever the client forged before it', async () => {
    const t = await build({ env: { CONNECT_TRUST_PROXY: trustProxy, CONNECT_PIN_LIMIT_PER_ADDRESS: '2' } });
    const client = await t.createClient();
    await addCustomer(t);
    const browser = new Browser(t.app, { remoteAddress: PROXY });
    expect(await wrongPinThroughProxy(browser, client, '198.51.100.1')).toContain('That PIN is not right.');
    expect(await wrongPinThroughProxy(browser, client, '198.51.100.2')).toContain('That PIN is not right.');
    expect(await wrongPinThroughProxy(browser, client, '198.51.100.3')).toContain('Too many attempts were made from your network');
  });
});

describe('CONNECT_TRUST_PROXY unset', () => {
  it('counts the peer: a forged header is ignored', async () => {
    const t = await build({ env: { CONNECT_PIN_LIMIT_PER_ADDRESS: '1' } });
    const client = await t.createClient();
    await addCustomer(t);
    const browser = new Browser(t.app, { remoteAddress: PROXY });
    expect(await wrongPinThroughProxy(browser, client, '198.51.100.1')).toContain('That PIN is not right.');
    expect(await wrongPinThroughProxy(browser, client, '198.51.100.2')).toContain('Too many attempts were made from your network');
  });
});

describe('CONNECT_TRUST_PROXY: addresses normalised before they are counted', () => {
  /** Posts a wrong PIN through the proxy with `hop` as the right-most untrusted hop; returns the page's text. */
  async function wrongPinFrom(browser: Browser, client: { id: string }, hop: string): Promise<string> {
    const { page } = await startLogin(browser, authorizeParams(client, { user_id: MOBILE }));
    const res = await browser.request({
      method: 'POST',
      url: formAction(page.body),
      body: { csrf_token: csrfToken(page.body), mobile: MOBILE, pin: WRONG_PIN, action: 'login' },
      headers: { 'x-forwarded-for': hop },
    });
    return pageText(res.body);
  }

  it.each([
    ['an IPv4 address with ports and in its IPv4-mapped IPv6 spellings', ['198.51.100.1:1111', '::ffff:c633:6401', '[::FFFF:198.51.100.1]:2222']],
    ['addresses of one IPv6 /64', ['2001:db8:1:2::1', '[2001:DB8:1:2:ffff::9]:443', '2001:0db8:0001:0002:0:0:0:7']],
    ['hops that are not addresses (counted as the proxy, which then has the budget spent)', ['not-an-address', 'unknown', '198.51.100.1:port']],
    ['an IPv6 address with zone IDs node:net accepts but ipaddr.js does not', ['2001:db8:1:2::1%a-b', '2001:db8:1:2::2%a.b', '[2001:db8:1:2::3%:]:80']],
  ])('%s share one budget', async (_name, hops) => {
    const t = await build({ env: { CONNECT_TRUST_PROXY: '1', CONNECT_PIN_LIMIT_PER_ADDRESS: '2' } });
    const client = await t.createClient();
    await addCustomer(t);
    const browser = new Browser(t.app, { remoteAddress: PROXY });
    expect(await wrongPinFrom(browser, client, hops[0]!)).toContain('That PIN is not right.');
    expect(await wrongPinFrom(browser, client, hops[1]!)).toContain('That PIN is not right.');
    expect(await wrongPinFrom(browser, client, hops[2]!)).toContain('Too many attempts were made from your network');
    // Another address still has its own budget.
    expect(await wrongPinFrom(browser, client, '203.0.113.99')).toContain('That PIN is not right.');
  });

  it('the proxy itself is the address counted for a hop that is not one', async () => {
    const t = await build({ env: { CONNECT_TRUST_PROXY: '1', CONNECT_PIN_LIMIT_PER_ADDRESS: '1' } });
    const client = await t.createClient();
    await addCustomer(t);
    const browser = new Browser(t.app, { remoteAddress: PROXY });
    expect(await wrongPinFrom(browser, client, 'garbage')).toContain('That PIN is not right.');
    // The proxy's address, written in the header by a second proxy, is the same budget.
    expect(await wrongPinFrom(browser, client, `${PROXY}:8080`)).toContain('Too many attempts were made from your network');
  });
});
