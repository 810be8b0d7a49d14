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
 *    │ session gone                             │
 * consent_required ──approve──▶ code_issued ◀──one-time PIN right
 *    └──────────── cancel (from any open state) ──▶ cancelled
 * ```
 *
 * The code then lives its own short life: `issued` → `redeemed` (exactly
 * once) or `expired`.
 */

/** Where a journey stands. */
export type JourneyState = 'pending' | 'otp_sent' | 'consent_required' | 'code_issued' | 'cancelled';

/** One move of a journey: the states it may start from and the state it leads to. */
export interface JourneyTransition {
  readonly name: string;
  readonly from: readonly JourneyState[];
  readonly to: JourneyState;
}

const OPEN_FOR_LOGIN: readonly JourneyState[] = ['pending', 'otp_sent'];

/** Every transition a journey can make. */
export const TRANSITIONS = {
  /**
   * The PIN was right (login), or the registration form was accepted: the
   * customer is known, and a new one-time-PIN challenge is stored with the
   * move, its code then handed to the SMS gateway.
   */
  codeSent: { name: 'code_sent', from: OPEN_FOR_LOGIN, to: 'otp_sent' },
  /** The one-time PIN was right: session, approval and code, all at once. */
  otpVerified: { name: 'otp_verified', from: ['otp_sent'], to: 'code_issued' },
  /** The customer approved the client on the consent page. */
  approved: { name: 'approved', from: ['consent_required'], to: 'code_issued' },
  /** The session behind a consent page ended: the customer must log in. */
  loginRequired: { name: 'login_required', from: ['consent_required'], to: 'pending' },
  /** The customer cancelled: `access_denied`. */
  cancelled: { name: 'cancelled', from: [...OPEN_FOR_LOGIN, 'consent_required'], to: 'cancelled' },
} as const satisfies Record<string, JourneyTransition>;

/** States a journey never leaves. */
export const FINAL_STATES: readonly JourneyState[] = ['code_issued', 'cancelled'];

/** Whether `transition` may start from `state`. */
export function canMove(state: JourneyState, transition: JourneyTransition): boolean {
  return transition.from.includes(state);
}

/** Where an authorization code stands: `issued` until redeemed once or expired. */
export type CodeState = 'issued' | 'redeemed' | 'expired';

/** The state of a code at `now`. */
export function codeState(code: { consumedAt: number | null; expiresAt: number }, now: number): CodeState {
  if (code.consumedAt !== null) return 'redeemed';
  return code.expiresAt > now ? 'issued' : 'expired';
}
