/**
 * The customer's journey as states and transitions (docs/journey.md).
 *
 * A journey is one `/authorize` request that needs the customer: it starts
 * `pending` (log in or register) or `consent_required` (a live session meets
 * a client the customer has not approved), and ends `code_issued` or
 * `cancelled`; past its expiry it is over in any state. Every move is one
 * conditional update in the database (`AuthorizationRequestStore.
 * transitionAuthorizationRequest`), so of two concurrent steps only one
 * moves the journey, on any number of instances.
 *
 * ```
 * pending ──PIN right / registration form──▶ otp_sent ◀─┐ PIN again (another tab)
 *    ▲                                          │  └─────┘
 *    │ session gone, or "Not you?"              │
 * consent_required ──approve──▶ code_issued ◀──one-time PIN right
 *                                   ▲
 * pending, otp_sent, reset_otp_sent, reset_verified ──passkey verified──┘
 *    └──────────── cancel (from any open state) ──▶ cancelled
 *
 * pending, otp_sent ──forgot PIN: mobile──▶ reset_otp_sent ──reset code right──▶ reset_verified
 *    ▲                                                                               │
 *    └──────────────────────────── new PIN set ◀─────────────────────────────────────┘
 * ```
 *
 * A PIN reset (docs/journey.md, "States and transitions") ends back at `pending`,
 * so the customer logs in with the new PIN as usual, in the same journey.
 *
 * The code then lives its own short life: `issued` → `redeemed` (exactly
 * once) or `expired` (`codes/authorization-code.ts`).
 */

/** Where a journey stands. */
export type JourneyState = 'pending' | 'otp_sent' | 'reset_otp_sent' | 'reset_verified' | 'consent_required' | 'code_issued' | 'cancelled';

/** One move of a journey: the states it may start from and the state it leads to. */
export interface JourneyTransition {
  readonly name: string;
  readonly from: readonly JourneyState[];
  readonly to: JourneyState;
}

/** The states from which a customer may log in, register, or ask to reset the PIN (from another tab, too). */
const OPEN_FOR_LOGIN: readonly JourneyState[] = ['pending', 'otp_sent', 'reset_otp_sent', 'reset_verified'];

/** Every transition a journey can make. */
export const TRANSITIONS = {
  /**
   * The PIN was right (login), or the registration form was accepted: the
   * customer is known, and a new one-time-PIN challenge is stored with the
   * move, its code then handed to the SMS gateway.
   */
  codeSent: { name: 'code_sent', from: OPEN_FOR_LOGIN, to: 'otp_sent' },
  /**
   * "Send a new code" after the last code ended: a new challenge is stored
   * with the move, only while the journey still waits for its code (one
   * that was cancelled, by the customer, an operator's lock or a PIN reset,
   * gets none).
   */
  codeResent: { name: 'code_resent', from: ['otp_sent'], to: 'otp_sent' },
  /** The one-time PIN was right: session, approval and code, all at once. */
  otpVerified: { name: 'otp_verified', from: ['otp_sent'], to: 'code_issued' },
  /**
   * A passkey signed in (docs/journey.md, "Passkeys"): from any state open
   * for login, no SMS sent; session, approval and code, all at once, the
   * journey bound to the passkey's customer.
   */
  passkeyVerified: { name: 'passkey_verified', from: OPEN_FOR_LOGIN, to: 'code_issued' },
  /** The customer approved the client on the consent page. */
  approved: { name: 'approved', from: ['consent_required'], to: 'code_issued' },
  /** The session behind a consent page ended: the customer must log in. */
  loginRequired: { name: 'login_required', from: ['consent_required'], to: 'pending' },
  /**
   * "Not you? Use another account" on the consent page: the session is
   * ended with the move, and the journey, no longer bound to its
   * customer, goes back to its login page.
   */
  accountSwitched: { name: 'account_switched', from: ['consent_required'], to: 'pending' },
  /**
   * "Forgot PIN?": a mobile was given on the reset page. A reset challenge
   * is stored with the move (whether or not the mobile has an account that
   * may reset its PIN: the move looks the same either way), its code then
   * handed to the SMS gateway when there is one to send.
   */
  resetCodeSent: { name: 'reset_code_sent', from: OPEN_FOR_LOGIN, to: 'reset_otp_sent' },
  /** The reset code was right: the journey is bound to the customer, who may now choose a new PIN, once. */
  resetVerified: { name: 'reset_verified', from: ['reset_otp_sent'], to: 'reset_verified' },
  /** The new PIN was set: back to the login page, unbound, to log in with it. */
  pinReset: { name: 'pin_reset', from: ['reset_verified'], to: 'pending' },
  /** The customer cancelled: `access_denied`. */
  cancelled: { name: 'cancelled', from: [...OPEN_FOR_LOGIN, 'consent_required'], to: 'cancelled' },
} as const satisfies Record<string, JourneyTransition>;

/**
 * Why a journey was ended for its customer rather than by its own steps
 * (docs/journey.md, "When a sign-in ends"): `lock`, an operator's
 * `customers lock`; `pin_reset`, a PIN reset completed in another journey.
 */
export type JourneyEnd = 'lock' | 'pin_reset';

/** Whether `value` is a {@link JourneyEnd}. */
export function isJourneyEnd(value: unknown): value is JourneyEnd {
  return value === 'lock' || value === 'pin_reset';
}

/** States a journey never leaves. */
export const FINAL_STATES: readonly JourneyState[] = ['code_issued', 'cancelled'];

/** Whether `transition` may start from `state`. */
export function canMove(state: JourneyState, transition: JourneyTransition): boolean {
  return transition.from.includes(state);
}
