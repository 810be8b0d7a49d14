import type { AuditLog, AuditStore } from '../audit/audit-log.js';
import type { Client } from '../clients/client.js';
import type { Clock } from '../clock.js';
import type { PinCheckQueue } from '../customers/pin.js';
import type { CustomerStore } from '../customers/customer-store.js';
import type { Lifetimes } from '../lifetimes.js';
import type { AttemptLimiter, StartLimiter, WrongEntryCounter } from '../limits/attempt-limiter.js';
import type { SendLimiter } from '../limits/send-limiter.js';
import type { OtpHasher } from '../otp/otp-hasher.js';
import type { OtpChallengeStore } from '../otp/otp-challenge-store.js';
import type { SmsLog, SmsSender } from '../sms/sms-sender.js';
import type { TokenSessionStore } from '../tokens/token-session-store.js';
import type { SubKeys } from '../keys/master-keys.js';
import type { AuthorizationCodeStore } from '../codes/code-store.js';
import type { PasskeyStore } from '../passkeys/passkey-store.js';
import type { PushedRequestStore } from '../authorize/pushed-request-store.js';
import type { AuthorizationRequestStore, ConsentStore, CustomerSessionStore, SignInStore } from './stores.js';

/** The stores a journey reads and writes. */
export interface JourneyStores {
  readonly authorizationRequests: AuthorizationRequestStore;
  readonly otpChallenges: OtpChallengeStore;
  readonly customerSessions: CustomerSessionStore;
  readonly consents: ConsentStore;
  readonly codes: AuthorizationCodeStore;
  readonly customers: CustomerStore;
  readonly signIns: SignInStore;
  /** A PIN reset revokes the customer's token sessions, as `customers lock` does. */
  readonly tokenSessions: Pick<TokenSessionStore, 'revokeTokenSessionsOf'>;
  /** A PIN reset's audit event is written with its other writes. */
  readonly audit: Pick<AuditStore, 'insertAuditEvent'>;
  /** Customers' passkeys and the challenges of their ceremonies (docs/journey.md, "Passkeys"). */
  readonly passkeys: PasskeyStore;
  /** Pushed authorization requests, used up by the `/authorize` that names one (docs/journey.md, "Pushed authorization requests"). */
  readonly pushedRequests: Pick<PushedRequestStore, 'consumePushedRequest'>;
}

/** How passkeys are checked (docs/operator-guide.md, "Passkeys"). */
export interface WebAuthnSettings {
  /** `CONNECT_WEBAUTHN_RP_ID`: the relying party ID. */
  readonly rpId: string;
  /** The origins a ceremony may come from: the auth URL's, then `CONNECT_WEBAUTHN_ORIGINS`; matched exactly. */
  readonly origins: readonly string[];
  /** `CONNECT_PASSKEY_HOLD`: seconds a passkey added without a passkey sign-in is held. */
  readonly holdSeconds: number;
}

/** How a sign-in completed, as the metrics count it. */
export type SignInMethod = 'pin_sms' | 'passkey';

/** The journey's database: its stores, and transactions over them (the storage satisfies it). */
export interface JourneyDatabase extends JourneyStores {
  /** Runs `work` in one transaction: it commits when `work` resolves, rolls back when it throws. */
  transaction<T>(work: (tx: JourneyStores) => Promise<T>): Promise<T>;
}

/** Everything the customer's journey needs; built once by the composition root. */
export interface JourneyDeps {
  readonly db: JourneyDatabase;
  findClient(id: string): Promise<Client | undefined>;
  readonly clock: Clock;
  readonly lifetimes: Pick<Lifetimes, 'codeSeconds' | 'sessionIdleSeconds' | 'sessionSeconds'>;
  /** The issuer, sent as `iss` on every redirect back to the client (RFC 9207). */
  readonly issuer: string;
  readonly pinChecks: PinCheckQueue;
  /** Failed PIN checks per client address. */
  readonly pinAttempts: AttemptLimiter;
  /** Journeys started per client address (`CONNECT_JOURNEY_LIMIT_PER_ADDRESS`). */
  readonly journeyStarts: StartLimiter;
  /** Wrong one-time-PIN entries per mobile number. */
  readonly otpEntries: WrongEntryCounter;
  /** One-time PINs sent per mobile and per client address. */
  readonly sends: SendLimiter;
  /**
   * The forgot-PIN flow's codes sent: budgets of their own per mobile, per
   * mobile and client address, per mobile over every browser that is not a
   * known device of its customer, and per (customer, known device), so that
   * a reset anyone may ask for never spends the customer's login budgets
   * nor the owner's own reset budget on a known device (the per-address and
   * global SMS budgets are shared; docs/journey.md, "A stranger cannot lock
   * the owner out").
   */
  readonly resetSends: SendLimiter;
  /**
   * Wrong PIN-reset codes per client address (the requester's), never per
   * mobile: taken before an entry is compared, given back unless it was wrong.
   */
  readonly resetOtpEntries: AttemptLimiter;
  readonly sms: SmsSender;
  readonly otpHasher: OtpHasher;
  /**
   * Keys the known-device cookie's proofs (`known-device.ts`): a browser
   * in which a customer signed in or reset the PIN asks for that customer's
   * reset codes from a budget of its own.
   */
  readonly knownDeviceKey: SubKeys | Uint8Array;
  readonly audit: AuditLog;
  /** Where a failed SMS or a spent global budget is logged. */
  readonly log?: SmsLog | undefined;
  /** `CONNECT_SMS_COUNTRIES`: the countries whose mobiles may sign in and register; unset = every country. */
  readonly smsCountries?: readonly string[] | undefined;
  /**
   * `CONNECT_DEFAULT_COUNTRY`: the country of a number typed in the mobile
   * field without its country code (`0917 123 4567`); unset: only the
   * international format is read.
   */
  readonly defaultCountry?: string | undefined;
  /**
   * Runs work once the page has been answered (a PIN reset's SMS: how long
   * the gateway takes must not tell whether the mobile has an account;
   * docs/hosted-login.md, "Forgot PIN"). The work reports its own failures.
   * Without it the work runs before the answer.
   */
  readonly later?: ((work: () => Promise<void>) => void) | undefined;
  /** Passkeys: relying party ID, accepted origins and the hold. */
  readonly webauthn: WebAuthnSettings;
  /** Counts a completed sign-in by method (metrics). */
  readonly countSignIn?: ((method: SignInMethod) => void) | undefined;
}
