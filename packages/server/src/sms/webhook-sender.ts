import { createHmac, randomUUID } from 'node:crypto';
import { SmsDeliveryFailed, type SmsSender } from '../core/sms/sms-sender.js';

/** How the webhook sender behaves. */
export interface WebhookOptions {
  readonly url: string;
  /** Key of the HMAC-SHA-256 signature. */
  readonly secret: string;
  /** Per attempt; default 5,000 ms. */
  readonly timeoutMs?: number;
  /** Retries after a network error or a 5xx/429 answer; default 2. */
  readonly retries?: number;
  /** Pause before retry n (1-based) in ms; default 250 * 3^(n-1). */
  readonly backoffMs?: (attempt: number) => number;
  readonly fetch?: typeof fetch;
  /** Seconds since the epoch, for the signed timestamp. */
  readonly now?: () => number;
}

/**
 * The production SMS gateway: each message is POSTed as JSON
 * `{"id","to","body"}` with headers `Connect-Timestamp` (epoch seconds) and
 * `Connect-Signature: sha256=<hex HMAC-SHA-256 of "<timestamp>.<body>">`, so
 * the gateway can check origin and freshness. Bounded retries with backoff;
 * the same `id` on every attempt lets the gateway drop duplicates. Each
 * attempt is bound to the caller's signal as well: once the request the
 * code was for has been answered, the attempt under way is cut off and no
 * other is made (docs/operator-guide.md, "Timeouts").
 */
export function createWebhookSender(options: WebhookOptions): SmsSender {
  const doFetch = options.fetch ?? fetch;
  const retries = options.retries ?? 2;
  const backoff = options.backoffMs ?? ((attempt: number) => 250 * 3 ** (attempt - 1));
  const now = options.now ?? (() => Math.floor(Date.now() / 1000));
  return {
    async send(message, sendOptions) {
      const ended = sendOptions?.signal;
      const body = JSON.stringify({ id: randomUUID(), to: message.to, body: message.body });
      let lastProblem = 'no attempt made';
      for (let attempt = 0; attempt <= retries; attempt++) {
        if (attempt > 0) await pause(backoff(attempt), ended);
        if (ended?.aborted) throw new SmsDeliveryFailed(REQUEST_ENDED);
        const timestamp = String(now());
        const signature = createHmac('sha256', options.secret).update(`${timestamp}.${body}`).digest('hex');
        try {
          const response = await doFetch(options.url, {
            method: 'POST',
            headers: {
              'content-type': 'application/json',
              'connect-timestamp': timestamp,
              'connect-signature': `sha256=${signature}`,
            },
            body,
            signal: ended ? AbortSignal.any([ended, AbortSignal.timeout(options.timeoutMs ?? 5_000)]) : AbortSignal.timeout(options.timeoutMs ?? 5_000),
          });
          await response.arrayBuffer().catch(() => undefined);
          if (response.ok) return;
          lastProblem = `gateway answered HTTP ${response.status}`;
          if (response.status < 500 && response.status !== 429) break;
        } catch (error) {
          if (ended?.aborted) throw new SmsDeliveryFailed(REQUEST_ENDED);
          lastProblem = error instanceof Error && error.name === 'TimeoutError' ? 'gateway timed out' : 'gateway unreachable';
        }
      }
      throw new SmsDeliveryFailed(lastProblem);
    },
  };
}

/** Why a send stopped when its request had been answered. */
const REQUEST_ENDED = 'request already answered';

/** Waits `ms`, or less when `signal` is aborted meanwhile. */
function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}
