import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { SmsDeliveryFailed } from '../../../src/core/sms/sms-sender.js';
import { createWebhookSender, type WebhookOptions } from '../../../src/sms/webhook-sender.js';

/** A Standard Webhooks secret: `whsec_` and the base64 of 32 bytes. */
const SECRET = `whsec_${Buffer.from('connect-test-webhook-key-32bytes').toString('base64')}`;
const MESSAGE = { to: '+639171234567', body: '482915 is your Connect code to link your account to Acme Shop.\n\n@auth.connect.test #482915' };
const NOW = 1_767_225_600;

/** One request as the gateway received it. */
interface Received {
  readonly headers: IncomingMessage['headers'];
  readonly rawBody: string;
  /** Whether the standardwebhooks library's `Webhook.verify`, given SECRET, accepts the request as received. */
  readonly signatureValid: boolean;
}

type Answer = (req: IncomingMessage, res: ServerResponse, attempt: number) => void;

const servers: Server[] = [];
// Only the clock that the library's freshness check reads (5 minutes either way): the signed timestamp is NOW.
beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'], now: NOW * 1000 });
});
afterEach(async () => {
  vi.useRealTimers();
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/** Whether a gateway holding `secret` accepts the call, verified as the Standard Webhooks library does. */
function verifies(secret: string, rawBody: string, headers: IncomingMessage['headers']): boolean {
  try {
    new Webhook(secret).verify(rawBody, headers as Record<string, string>);
    return true;
  } catch (error) {
    if (error instanceof WebhookVerificationError) return false;
    throw error;
  }
}

/** A gateway on 127.0.0.1 answering each request with `answer`; it checks every signature. */
async function gateway(answer: Answer): Promise<{ url: string; received: Received[] }> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const rawBody = Buffer.concat(chunks).toString('utf8');
      received.push({ headers: req.headers, rawBody, signatureValid: verifies(SECRET, rawBody, req.headers) });
      answer(req, res, received.length);
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/sms`, received };
}

const status = (code: number): Answer => (_req, res) => res.writeHead(code, { 'content-type': 'application/json' }).end('{}');

function sender(url: string, options: Partial<WebhookOptions> = {}) {
  return createWebhookSender({ url, secret: SECRET, backoffMs: () => 1, now: () => NOW, ...options });
}

/** The failure of `send`, checked to be SmsDeliveryFailed that leaks neither message nor secret. */
async function failure(promise: Promise<void>): Promise<SmsDeliveryFailed> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(SmsDeliveryFailed);
  const failed = error as SmsDeliveryFailed;
  for (const text of [failed.message, String(failed.stack), JSON.stringify(failed)]) {
    expect(text).not.toContain(MESSAGE.body);
    expect(text).not.toContain('482915');
    expect(text).not.toContain(SECRET);
  }
  return failed;
}

describe('webhook SMS sender', () => {
  it('POSTs {id, to, body} as JSON, signed as Standard Webhooks says: the library verifies it, and refuses a tampered body', async () => {
    const gw = await gateway(status(200));
    await sender(gw.url).send(MESSAGE);
    expect(gw.received).toHaveLength(1);
    const [request] = gw.received;
    expect(request?.headers['content-type']).toBe('application/json');
    const body = JSON.parse(request?.rawBody ?? '') as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(['body', 'id', 'to']);
    expect(body).toEqual({ id: expect.stringMatching(/^[0-9a-f-]{36}$/), to: MESSAGE.to, body: MESSAGE.body });
    expect(request?.headers['webhook-id']).toBe(body.id);
    expect(request?.headers['webhook-timestamp']).toBe(String(NOW));
    expect(request?.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(request?.signatureValid).toBe(true);

    const headers = request?.headers ?? {};
    const tampered = (request?.rawBody ?? '').replace('482915', '000000');
    expect(tampered).not.toBe(request?.rawBody);
    expect(verifies(SECRET, tampered, headers)).toBe(false);
    // Another id or timestamp than the one signed is refused too; so is the call ten minutes later.
    expect(verifies(SECRET, request?.rawBody ?? '', { ...headers, 'webhook-id': 'another' })).toBe(false);
    expect(verifies(SECRET, request?.rawBody ?? '', { ...headers, 'webhook-timestamp': String(NOW - 1) })).toBe(false);
    vi.setSystemTime((NOW + 600) * 1000);
    expect(verifies(SECRET, request?.rawBody ?? '', headers)).toBe(false);
  });

  it('signs with the secret: a gateway with another secret would refuse it', async () => {
    const gw = await gateway(status(200));
    await createWebhookSender({ url: gw.url, secret: `whsec_${Buffer.alloc(32, 7).toString('base64')}`, now: () => NOW }).send(MESSAGE);
    expect(gw.received[0]?.signatureValid).toBe(false);
  });

  it('a secret without whsec_ (an earlier release\'s) is the key as its UTF-8 bytes: the library verifies it given whsec_ and their base64', async () => {
    const gw = await gateway(status(200));
    const legacy = 'webhook-signing-secret-ü';
    await createWebhookSender({ url: gw.url, secret: legacy, now: () => NOW }).send(MESSAGE);
    const [request] = gw.received;
    expect(verifies(`whsec_${Buffer.from(legacy, 'utf8').toString('base64')}`, request?.rawBody ?? '', request?.headers ?? {})).toBe(true);
    expect(request?.signatureValid).toBe(false);
  });

  it('gives every message its own id', async () => {
    const gw = await gateway(status(204));
    const s = sender(gw.url);
    await s.send(MESSAGE);
    await s.send(MESSAGE);
    const ids = gw.received.map((r) => (JSON.parse(r.rawBody) as { id: string }).id);
    expect(new Set(ids).size).toBe(2);
  });

  it('retries after a 500 with the same id and a fresh valid signature', async () => {
    const gw = await gateway((req, res, attempt) => status(attempt === 1 ? 500 : 200)(req, res, attempt));
    await sender(gw.url).send(MESSAGE);
    expect(gw.received).toHaveLength(2);
    const ids = gw.received.map((r) => (JSON.parse(r.rawBody) as { id: string }).id);
    expect(ids[0]).toBe(ids[1]);
    expect(gw.received.every((r) => r.signatureValid)).toBe(true);
  });

  it('retries after a 429', async () => {
    const gw = await gateway((req, res, attempt) => status(attempt === 1 ? 429 : 200)(req, res, attempt));
    await sender(gw.url).send(MESSAGE);
    expect(gw.received).toHaveLength(2);
  });

  it('retries after a network error with the same id', async () => {
    const gw = await gateway((req, res, attempt) => {
      if (attempt === 1) req.socket.destroy();
      else status(200)(req, res, attempt);
    });
    await sender(gw.url).send(MESSAGE);
    expect(gw.received).toHaveLength(2);
    const ids = gw.received.map((r) => (JSON.parse(r.rawBody) as { id: string }).id);
    expect(ids[0]).toBe(ids[1]);
  });

  it('gives up after the retries with SmsDeliveryFailed', async () => {
    const gw = await gateway(status(503));
    const error = await failure(sender(gw.url, { retries: 2 }).send(MESSAGE));
    expect(error.message).toMatch(/HTTP 503/);
    expect(gw.received).toHaveLength(3);
  });

  it('does not retry after a 400: the message is refused, not the gateway down', async () => {
    const gw = await gateway(status(400));
    const error = await failure(sender(gw.url).send(MESSAGE));
    expect(error.message).toMatch(/HTTP 400/);
    expect(error.refused).toBe(true);
    expect(gw.received).toHaveLength(1);
  });

  it.each([401, 403, 404, 405])('a %i refuses Connect, not one message: an outage of the gateway, not retried', async (code) => {
    const gw = await gateway(status(code));
    const error = await failure(sender(gw.url).send(MESSAGE));
    expect(error.message).toMatch(new RegExp(`HTTP ${code}`));
    expect(error.refused).toBe(false);
    expect(gw.received).toHaveLength(1);
  });

  it('never follows a redirect: the code and the number go to the configured URL only, signed, and nowhere else', async () => {
    const elsewhere = await gateway(status(200));
    const gw = await gateway((_req, res) => res.writeHead(307, { location: elsewhere.url }).end());
    const error = await failure(sender(gw.url).send(MESSAGE));
    expect(error.message).toMatch(/HTTP 307/);
    expect(gw.received).toHaveLength(1);
    expect(elsewhere.received).toEqual([]);
  });

  it('a 5xx is not a refusal of the message', async () => {
    const error = await failure(sender((await gateway(status(503))).url, { retries: 0 }).send(MESSAGE));
    expect(error.refused).toBe(false);
  });

  it('one budget for the whole send: a gateway that holds the first attempt gets no retry, and the send fails at the budget', async () => {
    const gw = await gateway(() => {
      // never answers
    });
    const started = performance.now();
    const error = await failure(sender(gw.url, { budgetMs: 300, retries: 2 }).send(MESSAGE));
    const took = performance.now() - started;
    expect(error.reason).toBe('gateway timed out');
    expect(error.refused).toBe(false);
    // The first attempt spent the budget: no retry was made.
    expect(gw.received).toHaveLength(1);
    expect(took).toBeGreaterThanOrEqual(290);
    // Not three attempts of it, nor the 5 s default (generous: loaded machines).
    expect(took).toBeLessThan(3_000);
  });

  it('retries only inside the budget: a pause that would outlast it ends the send', async () => {
    const gw = await gateway(status(503));
    const error = await failure(sender(gw.url, { budgetMs: 300, retries: 2, backoffMs: () => 60_000 }).send(MESSAGE));
    expect(error.reason).toBe('gateway timed out (gateway answered HTTP 503 before)');
    expect(gw.received).toHaveLength(1);
  });

  it('fails at the budget when the gateway accepts the connection but never reads it', async () => {
    const held: Socket[] = [];
    // Accepted, never read, never answered.
    const silent = createNetServer({ pauseOnConnect: true }, (socket) => void held.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const started = performance.now();
      const error = await failure(sender(`http://127.0.0.1:${(silent.address() as AddressInfo).port}/send`, { budgetMs: 300 }).send(MESSAGE));
      expect(error.reason).toBe('gateway timed out');
      expect(performance.now() - started).toBeLessThan(3_000);
    } finally {
      await new Promise((resolve) => {
        silent.close(resolve);
        for (const socket of held) socket.destroy();
      });
    }
  });

  it('fails with SmsDeliveryFailed when nothing listens', async () => {
    const gw = await gateway(status(200));
    const url = gw.url;
    const server = servers.pop();
    await new Promise((resolve) => server?.close(resolve));
    const error = await failure(sender(url).send(MESSAGE));
    expect(error.message).toMatch(/unreachable/);
  });

  describe('bound to the signal of the request the code is for', () => {
    it('sends nothing once the signal is aborted', async () => {
      const gw = await gateway(status(200));
      const error = await failure(sender(gw.url).send(MESSAGE, { signal: AbortSignal.abort() }));
      expect(error.reason).toBe('request already answered');
      expect(gw.received).toHaveLength(0);
    });

    it('cuts off the attempt under way when the signal is aborted, and makes no other', async () => {
      const gw = await gateway(() => {
        // never answers
      });
      const request = new AbortController();
      const started = performance.now();
      const sending = failure(sender(gw.url, { budgetMs: 5_000, retries: 2 }).send(MESSAGE, { signal: request.signal }));
      while (gw.received.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
      request.abort();
      const error = await sending;
      expect(error.reason).toBe('request already answered');
      // Cut off at once, not after the attempt's own 5 s timeout; no retry.
      expect(performance.now() - started).toBeLessThan(2_000);
      expect(gw.received).toHaveLength(1);
    });

    it('makes no retry once the signal is aborted during the pause between attempts', async () => {
      const request = new AbortController();
      const gw = await gateway((req, res, attempt) => {
        status(500)(req, res, attempt);
        request.abort();
      });
      const error = await failure(sender(gw.url, { retries: 2, backoffMs: () => 1_000 }).send(MESSAGE, { signal: request.signal }));
      expect(error.reason).toBe('request already answered');
      expect(gw.received).toHaveLength(1);
    });
  });
});
