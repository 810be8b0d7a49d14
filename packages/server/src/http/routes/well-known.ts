import type { FastifyInstance, FastifyReply } from 'fastify';
import { DPOP_SIGNING_ALGS } from '../../core/dpop/dpop-proof.js';
import { ACR_VALUES_SUPPORTED } from '../../core/authentication.js';
import { CLIENT_ASSERTION_ALGORITHMS } from '../../core/clients/client-keys.js';
import type { GrantRegistry } from '../../core/grants/registry.js';
import type { KeyRing } from '../../core/keys/key-ring.js';
import type { PublicUrls } from '../../core/tokens/public-urls.js';

/** What the discovery routes read. */
export interface WellKnownDeps {
  readonly urls: PublicUrls;
  readonly keyRing: Pick<KeyRing, 'jwks'>;
  readonly grants: GrantRegistry;
  /** `CONNECT_JWKS_MAX_AGE`: how long verifiers may cache `jwks.json`. */
  readonly jwksMaxAgeSeconds: number;
  /** `CONNECT_SCOPES_SUPPORTED`: the scopes listed as `scopes_supported`. */
  readonly scopesSupported: readonly string[];
}

/** The well-known path of RFC 8414 metadata. */
const METADATA_PATH = '/.well-known/oauth-authorization-server';

/**
 * `GET /.well-known/jwks.json` and `GET /.well-known/oauth-authorization-server`
 * (RFC 8414), describing exactly the endpoints and grants this server has.
 * When the auth URL has a path (`https://h/auth`), the metadata is also at
 * the well-known path followed by that path
 * (`/.well-known/oauth-authorization-server/auth`), where RFC 8414 §3.1 has
 * clients look for it (docs/operator-guide.md, "An auth URL with a path").
 */
export async function wellKnownRoutes(app: FastifyInstance, deps: WellKnownDeps): Promise<void> {
  app.get('/.well-known/jwks.json', async (_request, reply) => {
    // A rotated-in key is published this long (plus the key reload time) before it
    // signs, so a verifier that keeps its copy for max-age never meets an unknown kid.
    reply.header('cache-control', `public, max-age=${deps.jwksMaxAgeSeconds}`);
    return deps.keyRing.jwks();
  });

  app.get(METADATA_PATH, async (_request, reply) => sendMetadata(reply, deps));

  // Read at each request: without CONNECT_AUTH_URL the auth URL is known only once the server listens.
  app.get(`${METADATA_PATH}/*`, async (request, reply) => {
    const path = issuerPath(deps.urls.authUrl);
    if (path === '' || request.url.split('?')[0] !== `${METADATA_PATH}${path}`) return reply.callNotFound();
    return sendMetadata(reply, deps);
  });
}

/** The path of the issuer URL (`/auth` of `https://h/auth`), `''` when it has none. */
function issuerPath(authUrl: string): string {
  if (!URL.canParse(authUrl)) return '';
  const { pathname } = new URL(authUrl);
  return pathname === '/' ? '' : pathname;
}

function sendMetadata(reply: FastifyReply, deps: WellKnownDeps): FastifyReply {
  reply.header('cache-control', 'public, max-age=300');
  const issuer = deps.urls.authUrl;
  return reply.send({
    issuer,
    authorization_endpoint: `${issuer}/authorize`,
    token_endpoint: `${issuer}/token`,
    // RFC 9126 §5: pushed requests are optional server-wide; a fapi2 client must push (docs/journey.md, "FAPI 2.0 clients").
    pushed_authorization_request_endpoint: `${issuer}/par`,
    require_pushed_authorization_requests: false,
    jwks_uri: `${issuer}/.well-known/jwks.json`,
    grant_types_supported: [...deps.grants.keys()],
    // RFC 8414 §2: the scopes the operator lists (CONNECT_SCOPES_SUPPORTED); clients obtain those they are registered with.
    scopes_supported: [...deps.scopesSupported],
    // The acr values customer tokens carry (docs/tokens.md, "How the customer signed in").
    acr_values_supported: [...ACR_VALUES_SUPPORTED],
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'private_key_jwt'],
    token_endpoint_auth_signing_alg_values_supported: [...CLIENT_ASSERTION_ALGORITHMS],
    introspection_endpoint: `${issuer}/introspect`,
    introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'private_key_jwt'],
    introspection_endpoint_auth_signing_alg_values_supported: [...CLIENT_ASSERTION_ALGORITHMS],
    revocation_endpoint: `${issuer}/revoke`,
    revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'private_key_jwt'],
    revocation_endpoint_auth_signing_alg_values_supported: [...CLIENT_ASSERTION_ALGORITHMS],
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    code_challenge_methods_supported: ['S256'],
    prompt_values_supported: ['login', 'none'],
    // RFC 9207: authorization responses carry `iss`.
    authorization_response_iss_parameter_supported: true,
    // RFC 9449 §5.1: the algorithms a DPoP proof may use.
    dpop_signing_alg_values_supported: [...DPOP_SIGNING_ALGS],
  });
}
