/**
 * `@connect-auth/client`: the consumer SDK for Connect. No runtime
 * dependencies: it needs only `fetch`, `AbortSignal` and `btoa`.
 */
export { requestClientToken, type ClientCredentialsOptions, type ClientToken } from './client-credentials.js';
export { ConnectError, type ConnectErrorCode } from './errors.js';
