import type { FastifyInstance } from 'fastify';
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
}

/**
 * `GET /.well-known/jwks.json` and `GET /.well-known/oauth-authorization-server`
 * (RFC 8414), describing exactly the endpoints and grants this server has.
 */
export async function wellKnownRoutes(app: FastifyInstance, deps: WellKnownDeps): Promise<void> {
  app.get('/.well-known/jwks.json', async (_request, reply) => {
    // A rotated-in key is published this long (plus the key reload time) before it
    // signs, so a verifier that keeps its copy for max-age never meets an unknown kid.
    reply.header('cache-control', `public, max-age=${deps.jwksMaxAgeSeconds}`);
    return deps.keyRing.jwks();
  });

  app.get('/.well-known/oauth-authorization-server', async (_request, reply) => {
    reply.header('cache-control', 'public, max-age=300');
    const issuer = deps.urls.authUrl;
    return {
      issuer,
      authorization_endpoint: `${issuer}/authorize`,
      token_endpoint: `${issuer}/token`,
      jwks_uri: `${issuer}/.well-known/jwks.json`,
      grant_types_supported: [...deps.grants.keys()],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
      introspection_endpoint: `${issuer}/introspect`,
      introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
      revocation_endpoint: `${issuer}/revoke`,
      revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
      response_types_supported: ['code'],
      response_modes_supported: ['query'],
      code_challenge_methods_supported: ['S256'],
      prompt_values_supported: ['login', 'none'],
      // RFC 9207: authorization responses carry `iss`.
      authorization_response_iss_parameter_supported: true,
    };
  });
}
