import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { SmsDeliveryFailed } from '../../../src/core/sms/sms-sender.js';
import { createWebhookSender, type WebhookOptions } from '../../../src/sms/webhook-sender.js';

const SECRET = 'whsec-test-0123456789abcdef';
const MESSAGE = { to: '+639171234567', body: '482915 is your Connect one-time PIN to link your account to Acme Shop.' };
const NOW = 1_767_225_600;

/** One request as the gateway received it. */
interface Received {
  readonly headers: IncomingMessage['headers'];
  readonly rawBody: string;
  /** Whether connect-signature is the HMAC of `${connect-timestamp}.${rawBody}` under SECRET. */
  readonly signatureValid: boolean;
}

type Answer = (req: IncomingMessage, res: ServerResponse, attempt: number) => void;

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/** A gateway on 127.0.0.1 answering each request with `answer`; it checks every signature. */
async function gateway(answer: Answer): Promise<{ url: string; received: Received[] }> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const rawBody = Buffer.concat(chunks).toString('utf8');
      const timestamp = String(req.headers['connect-timestamp']);
      const expected = Buffer.from(`sha256=${createHmac('sha256', SECRET).update(`${timestamp}.${rawBody}`).digest('hex')}`);
      const given = Buffer.from(String(req.headers['connect-signature']));
      received.push({ headers: req.headers, rawBody, signatureValid: given.length === expected.length && timingSafeEqual(given, expected) });
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
  it('POSTs {id, to, body} as JSON with a timestamp and an HMAC-SHA-256 signature the gateway can verify', async () => {
    const gw = await gateway(status(200));
    await sender(gw.url).send(MESSAGE);
    expect(gw.received).toHaveLength(1);
    const [request] = gw.received;
    expect(request?.headers['content-type']).toBe('application/json');
    expect(request?.headers['connect-timestamp']).toBe(String(NOW));
    expect(request?.headers['connect-signature']).toMatch(/^sha256=[0-9a-f]{64}$/);
    expect(request?.signatureValid).toBe(true);
    const body = JSON.parse(request?.rawBody ?? '') as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(['body', 'id', 'to']);
    expect(body).toEqual({ id: expect.stringMatching(/^[0-9a-f-]{36}$/), to: MESSAGE.to, body: MESSAGE.body });
  });

  it('signs with the secret: a gateway with another secret would refuse it', async () => {
    const gw = await gateway(status(200));
    await createWebhookSender({ url: gw.url, secret: 'another-secret', now: () => NOW }).send(MESSAGE);
    expect(gw.received[0]?.signatureValid).toBe(false);
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

  it('does not retry after a 400', async () => {
    const gw = await gateway(status(400));
    const error = await failure(sender(gw.url).send(MESSAGE));
    expect(error.message).toMatch(/HTTP 400/);
    expect(gw.received).toHaveLength(1);
  });

  it('fails with SmsDeliveryFailed when the gateway never answers (timeout)', async () => {
    const gw = await gateway(() => {
      // never answers
    });
    const started = performance.now();
    const error = await failure(sender(gw.url, { timeoutMs: 100, retries: 1 }).send(MESSAGE));
    expect(error.message).toMatch(/timed out/);
    // Two attempts of 100 ms, not the 5 s default.
    expect(performance.now() - started).toBeLessThan(4_000);
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
      const sending = failure(sender(gw.url, { timeoutMs: 5_000, retries: 2 }).send(MESSAGE, { signal: request.signal }));
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
