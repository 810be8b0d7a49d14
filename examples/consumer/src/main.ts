import type { PrivateJwk } from '@connect-auth/client';
import { startConsumerApp } from './consumer-app.js';
import { startPlatformApi } from './platform-api.js';

/**
 * Runs the demo shop from environment variables:
 * CONNECT_AUTH_URL (default http://127.0.0.1:3000), CONNECT_BASE_URL,
 * CONNECT_CLIENT_ID, CONNECT_CLIENT_SECRET (required) or, for a FAPI 2.0
 * client, CONNECT_PRIVATE_JWK (its private signing JWK, as JSON), SHOP_HOST / SHOP_PORT
 * (default 127.0.0.1:4000), SHOP_REDIRECT_URI (default http://host:port/callback)
 * and CONNECT_REFRESH_VIA (`tokens` or `token`). With
 * CONNECT_RESOURCE_SERVER_ID and CONNECT_RESOURCE_SERVER_SECRET (a resource
 * server's credentials), the example platform API runs beside it on
 * API_PORT (default 4001) and the shop calls it; otherwise the shop calls
 * Connect's own example endpoint.
 */
const env = process.env;
const clientId = env.CONNECT_CLIENT_ID;
const clientSecret = env.CONNECT_CLIENT_SECRET;
const privateJwk = env.CONNECT_PRIVATE_JWK;
if (!clientId || !(clientSecret || privateJwk)) {
  console.error('Set CONNECT_CLIENT_ID and CONNECT_CLIENT_SECRET (npm start prints the demo client\'s), or CONNECT_PRIVATE_JWK for a FAPI 2.0 client, or run npm run demo.');
  process.exit(1);
}
// A FAPI 2.0 client signs with its key and binds its tokens to a DPoP key (docs/consumer-guide.md, "FAPI 2.0").
const credentials = privateJwk ? { privateKey: JSON.parse(privateJwk) as PrivateJwk, dpop: true } : { clientSecret: clientSecret as string };
const host = env.SHOP_HOST ?? '127.0.0.1';
const port = Number(env.SHOP_PORT ?? 4000);
const refreshVia = env.CONNECT_REFRESH_VIA === 'token' ? 'token' : 'tokens';
const authUrl = env.CONNECT_AUTH_URL ?? 'http://127.0.0.1:3000';
const apiId = env.CONNECT_RESOURCE_SERVER_ID;
const apiSecret = env.CONNECT_RESOURCE_SERVER_SECRET;
const api =
  apiId && apiSecret
    ? await startPlatformApi({ connect: { authUrl, clientId: apiId, clientSecret: apiSecret }, host, port: Number(env.API_PORT ?? 4001) })
    : undefined;
const shop = await startConsumerApp({
  connect: { authUrl, clientId, ...credentials, ...(env.CONNECT_BASE_URL ? { baseUrl: env.CONNECT_BASE_URL } : {}) },
  redirectUri: env.SHOP_REDIRECT_URI ?? `http://${host}:${port}/callback`,
  refreshVia,
  host,
  port,
  ...(api ? { profileUrl: `${api.url}/customer/profile`, payoutsUrl: `${api.url}/payouts` } : {}),
});
console.log(`Demo Shop: ${shop.url} (Connect at ${authUrl}${api ? `, platform API at ${api.url}` : ''})`);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => void Promise.all([shop.close(), api?.close()]).then(() => process.exit(0)));
}
