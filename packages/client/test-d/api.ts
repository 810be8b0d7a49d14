// Compile-only checks of the public API (run by `npm run typecheck`).
import { ConnectError, requestClientToken, type ClientToken, type ConnectErrorCode } from '../src/index.js';

const token: Promise<ClientToken> = requestClientToken({ authUrl: 'https://auth.example', clientId: 'id', clientSecret: 's' });
void token;

// @ts-expect-error clientSecret is required
void requestClientToken({ authUrl: 'https://auth.example', clientId: 'id' });

declare const err: ConnectError;
switch (err.error) {
  case 'invalid_client': {
    const code: 'invalid_client' = err.error;
    void code;
    break;
  }
  default: {
    const rest: ConnectErrorCode = err.error;
    void rest;
  }
}
// @ts-expect-error not a Connect error code
const bad: ConnectErrorCode = 'no_such_error';
void bad;
