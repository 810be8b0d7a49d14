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
