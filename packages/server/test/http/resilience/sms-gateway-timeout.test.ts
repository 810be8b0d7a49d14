import { createServer, type Server } from 'node:http';
import { createServer as createNetServer, type AddressInfo, type Server as NetServer, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { hashCookieValue } from '../../../src/core/journey/session.js';
import { createWebhookSender } from '../../../src/sms/webhook-sender.js';
import { build } from '../../helpers/build.js';
import { addCustomer, authorizeParams, Browser, expectPage, expectSeeOther, MOBILE, pageText, PIN, startLogin } from '../../helpers/customer-flow.js';

/**
 * A customer's login waits on the SMS gateway for one bounded budget of
 * Connect's own (docs/lifetimes.md, "SMS webhook"; docs/operator-guide.md,
 * "The SMS gateway"), however the gateway fails to answer: then the login
 * answers the "could not send" page, nothing half-written is left (the
 * code is retired unseen), the outage is logged once, and the customer's
 * "send a new code" works as soon as the gateway answers again.
 */

/** The budget of one send in these tests (5 s in production: the same code, a shorter wait). */
const BUDGET_MS = 1_000;

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

/**
 * A gateway on 127.0.0.1 whose behaviour the test switches: `hold` (the
 * HTTP request is read and never answered), `no-read` (the TCP connection
 * is accepted and never read) or `ok` (200).
 */
async function gateway(): Promise<{ url: string; received: () => number; fail(how: 'hold' | 'no-read'): void; answerAgain(): void }> {
  const mode: { now: 'hold' | 'no-read' | 'ok' } = { now: 'ok' };
  let received = 0;
  const http: Server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      received++;
      if (mode.now === 'ok') response.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const held: Socket[] = [];
  // In front of the HTTP server: in `no-read`, a new connection is accepted and left unread.
  const front: NetServer = createNetServer({ pauseOnConnect: true }, (socket) => {
    held.push(socket);
    if (mode.now === 'no-read') unread.push(socket);
    else serve(socket);
  });
  const unread: Socket[] = [];
  const serve = (socket: Socket) => {
    http.emit('connection', socket);
    socket.resume();
  };
  await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
  closers.push(async () => {
    for (const socket of held) socket.destroy();
    http.closeAllConnections();
    await Promise.all([new Promise((resolve) => front.close(resolve)), new Promise((resolve) => http.close(resolve))]);
  });
  return {
    url: `http://127.0.0.1:${(front.address() as AddressInfo).port}/send`,
    received: () => received,
    fail: (how) => void (mode.now = how),
    // Back: what was left unread is read now too, as a gateway that recovers does.
    answerAgain() {
      mode.now = 'ok';
      for (const socket of unread.splice(0)) if (!socket.destroyed) serve(socket);
    },
  };
}

describe('a login waits on the SMS gateway for one bounded budget', () => {
  it.each(['hold', 'no-read'] as const)(
    'gateway %s: the login answers "could not send" within the budget, the code is retired, one outage line; the gateway back, a new code goes',
    async (failing) => {
      const gw = await gateway();
      const t = await build({ sms: createWebhookSender({ url: gw.url, secret: 's', budgetMs: BUDGET_MS }), captureLogs: true });
      const client = await t.createClient();
      await addCustomer(t, MOBILE, PIN);
      const browser = new Browser(t.app, { remoteAddress: '192.0.2.10' });
      const { page, requestId } = await startLogin(browser, authorizeParams(client, { user_id: MOBILE }));

      gw.fail(failing);
      const started = performance.now();
      const res = await browser.submit(page, { mobile: MOBILE, pin: PIN, action: 'login' });
      const took = performance.now() - started;
      expectSeeOther(res, /^\/login\/otp\?request=/);
      // It waited on the gateway until the budget ran out, and no longer: no second attempt was made.
      expect(took).toBeGreaterThanOrEqual(BUDGET_MS - 20);
      // Budget + 1 s on an idle machine (measured ~1.1 s); generous, as the machine may be loaded.
      expect(took).toBeLessThan(BUDGET_MS + 4_000);
      expect(gw.received()).toBe(failing === 'hold' ? 1 : 0);

      // Nothing half-written: the journey waits at the one-time-PIN page, its code retired unseen.
      const challenge = await t.storage.otpChallenges.findLatestOtpChallenge(hashCookieValue(requestId));
      expect(challenge).toMatchObject({ mobile: MOBILE, consumedAt: expect.any(Number) });
      const otp = await browser.follow(res);
      expectPage(otp, 400);
      expect(pageText(otp.body)).toContain('We could not send the code. Try again: ask for a new code.');
      expect(await t.storage.audit.listAuditEvents({ type: 'sms.send_failed', limit: 10 })).toMatchObject([{ details: { reason: 'gateway timed out' } }]);

      // While the gateway still fails, a second try fails the same way: one outage line for both, no line per code.
      const again = await browser.submit(otp, { action: 'resend' });
      expect(pageText(again.body)).toContain('We could not send the code. Try again: ask for a new code.');
      const outage = t.logs.filter((line) => line.includes('"dependency":"sms_gateway"'));
      expect(outage).toHaveLength(1);
      expect(outage[0]).toContain('"outage":"started"');
      expect(outage[0]).toContain('gateway timed out');
      expect(t.logs.filter((line) => line.includes('one-time PIN not sent'))).toEqual([]);

      // The gateway answers again: the next "send a new code" sends, at once.
      gw.answerAgain();
      const before = gw.received();
      const sent = await browser.submit(again, { action: 'resend' });
      expect(sent.statusCode).toBe(200);
      expect(pageText(sent.body)).not.toContain('We could not send the code');
      // (A gateway that left requests unread reads them now as well: theirs are codes already retired.)
      expect(gw.received()).toBeGreaterThanOrEqual(before + 1);
      expect(await t.storage.otpChallenges.findLatestOtpChallenge(hashCookieValue(requestId))).toMatchObject({ consumedAt: null });
    },
  );
});
