import { expect } from 'vitest';
import { basicAuth } from '../helpers/build.js';

/**
 * The client's side of a browser login: exchanges the code the browser
 * brought back, with its PKCE verifier, at `POST /token` of the server at
 * `address`; expects 200 and returns the token response.
 */
export async function exchangeCode(
  address: string,
  client: { readonly clientId: string; readonly clientSecret: string },
  exchange: { readonly redirectUri: string; readonly code: string; readonly verifier: string },
  timeoutMs: number,
): Promise<Record<string, unknown>> {
  const res = await fetch(`${address}/token`, {
    method: 'POST',
    headers: { authorization: basicAuth(client.clientId, client.clientSecret), 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code: exchange.code,
      redirect_uri: exchange.redirectUri,
      code_verifier: exchange.verifier,
    }).toString(),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const body = (await res.json()) as Record<string, unknown>;
  expect(res.status, JSON.stringify(body)).toBe(200);
  return body;
}
