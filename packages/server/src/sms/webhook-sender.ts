import { randomUUID } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { SmsDeliveryFailed, type SmsSender } from '../core/sms/sms-sender.js';

/** How the webhook sender behaves. */
export interface WebhookOptions {
  readonly url: string;
  /**
   * `CONNECT_SMS_WEBHOOK_SECRET`, the key of the HMAC-SHA-256 signature:
   * `whsec_<base64>` (a Standard Webhooks secret: the key is the decoded
   * bytes), or any other string, whose UTF-8 bytes are the key (see
   * {@link webhookKey}).
   */
  readonly secret: string;
  /**
   * The whole send, every attempt and pause included, ms; default
   * {@link SMS_SEND_BUDGET_MS}. An attempt is cut off when it runs out, and
   * a retry is made only while some of it is left.
   */
  readonly budgetMs?: number;
  /** Retries after a network error or a 5xx/429 answer, within the budget; default 2. */
  readonly retries?: number;
  /** Pause before retry n (1-based) in ms; default 250 * 3^(n-1). */
  readonly backoffMs?: (attempt: number) => number;
  readonly fetch?: typeof fetch;
  /** Seconds since the epoch, for the signed timestamp. */
  readonly now?: () => number;
}

/**
 * The production SMS gateway: each message is POSTed as JSON
 * `{"id","to","body"}`, signed as the Standard Webhooks specification says
 * (https://www.standardwebhooks.com): headers `webhook-id` (the message's
 * `id`), `webhook-timestamp` (epoch seconds) and `webhook-signature`
 * (`v1,<base64 HMAC-SHA-256 of "<id>.<timestamp>.<body>">`), so the gateway
 * checks origin and freshness with a Standard Webhooks library
 * (docs/operator-guide.md, "The SMS gateway"). One budget bounds the
 * whole send (docs/lifetimes.md): bounded retries with backoff inside it;
 * the same `id` on every attempt lets the gateway drop duplicates. A
 * redirect is never followed. A 3xx, or a 4xx answer other than 429, refuses that one message
 * ({@link SmsDeliveryFailed.refused}): it is not retried and says nothing
 * of the gateway's health; except the answers that say every message
 * would be refused ({@link GATEWAY_REFUSES_EVERY_MESSAGE}: a secret or URL
 * that is wrong), which are the gateway's failure, an outage, and not
 * retried either. Each attempt is bound to the caller's signal as well: once
 * the request the code was for has been answered, the attempt under way is
 * cut off and no other is made (docs/operator-guide.md, "Timeouts").
 */
export function createWebhookSender(options: WebhookOptions): SmsSender {
  const doFetch = options.fetch ?? fetch;
  const retries = options.retries ?? 2;
  const backoff = options.backoffMs ?? ((attempt: number) => 250 * 3 ** (attempt - 1));
  const now = options.now ?? (() => Math.floor(Date.now() / 1000));
  const signer = new Webhook(webhookKey(options.secret), { format: 'raw' });
  return {
    async send(message, sendOptions) {
      const ended = sendOptions?.signal;
      const outOfTime = AbortSignal.timeout(options.budgetMs ?? SMS_SEND_BUDGET_MS);
      const stop = ended ? AbortSignal.any([ended, outOfTime]) : outOfTime;
      const id = randomUUID();
      const body = JSON.stringify({ id, to: message.to, body: message.body });
      let lastProblem = NO_ATTEMPT;
      for (let attempt = 0; attempt <= retries; attempt++) {
        if (attempt > 0) await pause(backoff(attempt), stop);
        if (ended?.aborted) throw new SmsDeliveryFailed(REQUEST_ENDED);
        if (outOfTime.aborted) throw new SmsDeliveryFailed(lastProblem === NO_ATTEMPT || lastProblem === TIMED_OUT ? TIMED_OUT : `${TIMED_OUT} (${lastProblem} before)`);
        const timestamp = now();
        const signature = signer.sign(id, new Date(timestamp * 1000), body);
        try {
          const response = await doFetch(options.url, {
            method: 'POST',
            headers: {
              'content-type': 'application/json',
              'webhook-id': id,
              'webhook-timestamp': String(timestamp),
              'webhook-signature': signature,
            },
            body,
            // The code and the number go to the configured URL only: a redirect is not followed,
            // it refuses the message like any other 3xx/4xx answer.
            redirect: 'manual',
            signal: stop,
          });
          await response.arrayBuffer().catch(() => undefined);
          if (response.ok) return;
          lastProblem = `gateway answered HTTP ${response.status}`;
          if (GATEWAY_REFUSES_EVERY_MESSAGE.has(response.status)) throw new SmsDeliveryFailed(lastProblem);
          if (response.status < 500 && response.status !== 429) throw new SmsDeliveryFailed(lastProblem, { refused: true });
        } catch (error) {
          if (error instanceof SmsDeliveryFailed) throw error;
          if (ended?.aborted) throw new SmsDeliveryFailed(REQUEST_ENDED);
          lastProblem = outOfTime.aborted ? TIMED_OUT : 'gateway unreachable';
        }
      }
      throw new SmsDeliveryFailed(lastProblem);
    },
  };
}

/**
 * Answers that refuse Connect itself rather than one message: the
 * signature or its secret (401, 403), or the URL (404, 405). Every
 * code would get the same, so they open an outage of the gateway, logged
 * once (docs/operator-guide.md, "The SMS gateway").
 */
export const GATEWAY_REFUSES_EVERY_MESSAGE: ReadonlySet<number> = new Set([401, 403, 404, 405]);

/** The prefix of a Standard Webhooks secret. */
export const STANDARD_SECRET_PREFIX = 'whsec_';

/**
 * The HMAC key a `CONNECT_SMS_WEBHOOK_SECRET` stands for: after `whsec_`,
 * base64 (a Standard Webhooks secret, what a gateway's library is given as
 * it is); any other value is the key as its UTF-8 bytes (the secrets of
 * earlier releases, which a gateway gives its library as `whsec_` followed
 * by their base64). The prefix alone decides, so no secret means two keys.
 */
export function webhookKey(secret: string): Uint8Array {
  return secret.startsWith(STANDARD_SECRET_PREFIX) ? Buffer.from(secret.slice(STANDARD_SECRET_PREFIX.length), 'base64') : Buffer.from(secret, 'utf8');
}

/**
 * How long one SMS may take at the gateway, all attempts included, ms
 * (docs/lifetimes.md): a request that waits on a send is answered within
 * it plus its own work.
 */
export const SMS_SEND_BUDGET_MS = 5_000;

const NO_ATTEMPT = 'no attempt made';
const TIMED_OUT = 'gateway timed out';

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
