/**
 * Error codes a Connect endpoint can answer with (RFC 6749 §5.2, RFC 6750 §3.1),
 * plus `invalid_response` when the answer was not a Connect answer at all.
 */
export type ConnectErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'invalid_token'
  | 'temporarily_unavailable'
  | 'server_error'
  | 'invalid_response';

/** An error answer from Connect, or an answer that could not be understood. */
export class ConnectError extends Error {
  override readonly name = 'ConnectError';
  /** The OAuth error code; `switch (err.error)` narrows on it. */
  readonly error: ConnectErrorCode;
  /** Connect's `error_description`, if any. */
  readonly description: string | undefined;
  /** The HTTP status, when there was a response. */
  readonly status: number | undefined;

  constructor(error: ConnectErrorCode, description: string | undefined, status: number | undefined) {
    super(description ? `${error}: ${description}` : error);
    this.error = error;
    this.description = description;
    this.status = status;
  }
}
