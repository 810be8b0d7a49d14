// panva's oidc-provider (v9) set up to do what Connect's token endpoint does
// for client_credentials: one client authenticating with client_secret_basic,
// and an ES256-signed JWT access token (RFC 9068, typ at+jwt) per request.
//
// oidc-provider mints JWT access tokens only for a resource server whose
// `getResourceServerInfo` says `accessTokenFormat: 'jwt'`; `defaultResource`
// makes that resource apply when the request names none, as Connect's
// requests do. Everything else stays at its defaults (in-memory adapter).
//
// Environment: PORT (required), HOST (default 127.0.0.1),
// BENCH_CLIENT_ID and BENCH_CLIENT_SECRET (the one client).
import { randomBytes } from 'node:crypto';
import { exportJWK, generateKeyPair } from 'jose';
import Provider from 'oidc-provider';

const port = Number(process.env.PORT);
const host = process.env.HOST ?? '127.0.0.1';
const clientId = process.env.BENCH_CLIENT_ID;
const clientSecret = process.env.BENCH_CLIENT_SECRET;
if (!port || !clientId || !clientSecret) {
  process.stderr.write('oidc-provider-server: PORT, BENCH_CLIENT_ID and BENCH_CLIENT_SECRET are required\n');
  process.exit(2);
}

const issuer = `http://${host}:${port}`;
const { privateKey } = await generateKeyPair('ES256', { extractable: true });
const signingJwk = { ...(await exportJWK(privateKey)), alg: 'ES256', use: 'sig' };

const resourceServer = {
  scope: '',
  audience: issuer,
  accessTokenTTL: 3600,
  accessTokenFormat: 'jwt',
  jwt: { sign: { alg: 'ES256' } },
};

const provider = new Provider(issuer, {
  clients: [
    {
      client_id: clientId,
      client_secret: clientSecret,
      token_endpoint_auth_method: 'client_secret_basic',
      // The provider's only key is ES256; the client default (RS256) would not validate.
      id_token_signed_response_alg: 'ES256',
      grant_types: ['client_credentials'],
      response_types: [],
      redirect_uris: [],
    },
  ],
  jwks: { keys: [signingJwk] },
  ttl: { ClientCredentials: resourceServer.accessTokenTTL },
  cookies: { keys: [randomBytes(32).toString('base64url')] },
  features: {
    clientCredentials: { enabled: true },
    devInteractions: { enabled: false },
    resourceIndicators: {
      enabled: true,
      defaultResource: async () => issuer,
      useGrantedResource: async () => true,
      getResourceServerInfo: async () => resourceServer,
    },
  },
});

const server = provider.listen(port, host, () => {
  process.stdout.write(`oidc-provider listening on ${issuer}\n`);
});
// Keep-alive connections would hold close() open; they are ended with the server.
for (const signal of ['SIGTERM', 'SIGINT']) {
  process.once(signal, () => {
    server.close(() => process.exit(0));
    server.closeAllConnections();
  });
}
