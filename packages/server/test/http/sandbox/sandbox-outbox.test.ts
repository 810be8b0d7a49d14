import { describe, expect, it } from 'vitest';
import { createOutboxSender } from '../../../src/sms/outbox-sender.js';
import { build, T0 } from '../../helpers/build.js';
import { expectJson, expectOAuthError } from '../../helpers/wire.js';
import { addCustomer, authorizeParams, Browser, MOBILE, OTHER_MOBILE, PIN, startLogin, submitCredentials } from '../../helpers/customer-flow.js';

const messagesUrl = (to: string) => `/sandbox/messages?to=${encodeURIComponent(to)}`;

describe('GET /sandbox/messages', () => {
  it('lists the one-time PINs sent to a number as {messages:[{to, body, sentAt}]}, newest first', async () => {
    const t = await build();
    const client = await t.createClient();
    await addCustomer(t);
    const browser = new Browser(t.app);
    const started = await startLogin(browser, authorizeParams(client));
    t.clock.advance(42);
    await submitCredentials(browser, started.page, MOBILE, PIN);

    const res = await t.app.inject({ method: 'GET', url: messagesUrl(MOBILE) });
    expect(res.statusCode).toBe(200);
    expectJson(res);
    expect(res.headers['cache-control']).toBe('no-store');
    const body = res.json<{ messages: Array<Record<string, unknown>> }>();
    expect(Object.keys(body)).toEqual(['messages']);
    expect(body.messages).toHaveLength(1);
    const [message] = body.messages;
    expect(Object.keys(message ?? {}).sort()).toEqual(['body', 'sentAt', 'to']);
    expect(message?.to).toBe(MOBILE);
    expect(message?.sentAt).toBe(new Date((T0 + 42) * 1000).toISOString());
    expect(message?.body).toMatch(/^\d{6} is your Connect code to link your account to Acme\. /);
  });

  it('is newest first, also for messages sent within the same second, and lists only the number asked for', async () => {
    const t = await build();
    const sender = createOutboxSender(t.storage.outbox, t.clock);
    await sender.send({ to: MOBILE, body: 'first' });
    t.clock.advance(1);
    await sender.send({ to: MOBILE, body: 'second' });
    await sender.send({ to: OTHER_MOBILE, body: 'other' });
    await sender.send({ to: MOBILE, body: 'third' });
    await sender.send({ to: MOBILE, body: 'fourth' });
    const res = await t.app.inject({ method: 'GET', url: messagesUrl(MOBILE) });
    expect(res.json()).toEqual({
      messages: [
        { to: MOBILE, body: 'fourth', sentAt: '2026-01-01T00:00:01.000Z' },
        { to: MOBILE, body: 'third', sentAt: '2026-01-01T00:00:01.000Z' },
        { to: MOBILE, body: 'second', sentAt: '2026-01-01T00:00:01.000Z' },
        { to: MOBILE, body: 'first', sentAt: '2026-01-01T00:00:00.000Z' },
      ],
    });
    // The number may be spelt as a customer would write it.
    const spaced = await t.app.inject({ method: 'GET', url: messagesUrl('+63 917 123 4567') });
    expect(spaced.json()).toEqual(res.json());
    const none = await t.app.inject({ method: 'GET', url: messagesUrl('+639991234567') });
    expect(none.statusCode).toBe(200);
    expect(none.json()).toEqual({ messages: [] });
  });

  it.each([
    ['no to', '/sandbox/messages'],
    ['an empty to', '/sandbox/messages?to='],
    ['a national number', messagesUrl('09171234567')],
    ['letters', messagesUrl('abc')],
    ['+1', messagesUrl('+1')],
    ['to twice', `${messagesUrl(MOBILE)}&to=${encodeURIComponent(MOBILE)}`],
    ['a bad percent-escape', '/sandbox/messages?to=%zz'],
    ['a 10 KB to', messagesUrl(`+63${'9'.repeat(10_240)}`)],
  ])('%s → 400 invalid_request as JSON', async (_name, url) => {
    const t = await build();
    const res = await t.app.inject({ method: 'GET', url });
    expectOAuthError(res, { status: 400, error: 'invalid_request', description: 'to must be one mobile number in E.164 format, e.g. +639171234567' });
  });

  it('does not exist in production', async () => {
    const t = await build({ environment: 'production' });
    await createOutboxSender(t.storage.outbox, t.clock).send({ to: MOBILE, body: '123456 is your code' });
    for (const url of [messagesUrl(MOBILE), '/sandbox/messages', '/sandbox/']) {
      const res = await t.app.inject({ method: 'GET', url });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toMatchObject({ error: 'not_found' });
      expect(res.body).not.toContain('123456');
    }
  });
});
