/** One text message. */
export interface SmsMessage {
  /** E.164 recipient. */
  readonly to: string;
  readonly body: string;
}

/**
 * Delivers SMS. Adapters live in `src/sms/`: the sandbox outbox, the
 * production HTTP webhook and a console sender for local development.
 */
export interface SmsSender {
  /**
   * Delivers one message; throws {@link SmsDeliveryFailed} when it could
   * not. Once `signal` is aborted (the request the message was for has been
   * answered) nothing more is sent: no new attempt, and an attempt under way
   * is cut off.
   */
  send(message: SmsMessage, options?: { readonly signal?: AbortSignal | undefined }): Promise<void>;
}

/** The SMS gateway did not take the message (down, refused, timed out). */
export class SmsDeliveryFailed extends Error {
  override readonly name = 'SmsDeliveryFailed';
  /** Why, in a few words that carry neither the recipient nor the text (e.g. `gateway timed out`). */
  readonly reason: string;
  /**
   * The gateway answered and refused this one message (a 4xx other than
   * 429, and other than those that refuse every message: 401, 403, 404 and
   * 405): a matter of the message, not an outage of the gateway
   * (docs/operator-guide.md, "The SMS gateway"). `false` for a network
   * error, a timeout, a 5xx/429 or an answer that refuses every message.
   */
  readonly refused: boolean;
  constructor(reason: string, options: { readonly refused?: boolean } = {}) {
    super(`SMS not delivered: ${reason}`);
    this.reason = reason;
    this.refused = options.refused ?? false;
  }
}

/** Where the sending of one-time PINs reports what went wrong (the server's log). */
export interface SmsLog {
  warn(details: object, message: string): void;
}

/**
 * The one-time-PIN text: it names the service, the consumer (or, for a PIN
 * reset, what the code is for) and the expiry, and warns never to share the
 * code. It never carries the customer's PIN.
 */
export function oneTimePinMessage(input: { code: string; clientName: string; ttlSeconds: number; reset?: boolean }): string {
  const minutes = Math.max(1, Math.round(input.ttlSeconds / 60));
  if (input.reset) {
    return (
      `${input.code} is your Connect code to reset your PIN. It expires in ${minutes} minute${minutes === 1 ? '' : 's'}. ` +
      `Never share this code with anyone, not even Connect staff. Did not ask for it? Ignore this message: your PIN stays the same.`
    );
  }
  return (
    `${input.code} is your Connect one-time PIN to link your account to ${input.clientName}. ` +
    `It expires in ${minutes} minute${minutes === 1 ? '' : 's'}. Never share this code with anyone, not even Connect staff.`
  );
}
