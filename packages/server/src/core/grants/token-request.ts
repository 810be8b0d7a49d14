import { clientAuthInputOf, type ClientAuthInput } from '../clients/client-authenticate.js';
import type { Client } from '../clients/client.js';
import { InvalidRequest, UnauthorizedClient, UnsupportedGrantType } from '../errors.js';
import type { TokenResult } from './grant.js';
import { verifyDpopProof, type DpopProofDeps } from '../dpop/dpop-proof.js';
import type { PublicUrls } from '../tokens/public-urls.js';
import type { GrantRegistry } from './registry.js';

/** A token request as it arrived, after form parsing. */
export interface TokenEndpointInput {
  /** Form parameters, each present once; empty ones already dropped (RFC 6749 §3.2). */
  readonly params: Readonly<Record<string, string>>;
  /** The raw `Authorization` header, if any. */
  readonly authorization?: string | undefined;
  /** The caller's address, for the audit log. */
  readonly ip?: string | undefined;
  /** The ID of the request this is part of (its `X-Request-Id`), recorded with the audit events it causes. */
  readonly correlationId?: string | undefined;
  /** Every `DPoP` header of the request, as sent (RFC 9449 §4.1); empty or absent: none. */
  readonly dpopProofs?: readonly string[] | undefined;
}

/** What the token endpoint pipeline needs. */
export interface TokenEndpointDeps {
  readonly grants: GrantRegistry;
  authenticate(input: ClientAuthInput): Promise<Client>;
  /** DPoP proof checks, and the public URLs whose `{auth_url}/token` a proof's `htu` must name. */
  readonly dpop: DpopProofDeps & { readonly urls: PublicUrls };
}

/** A token response, and the DPoP nonce to send with it when the request carried a proof (RFC 9449 §8). */
export type TokenEndpointResult = TokenResult & { readonly dpopNonce?: string | undefined };

/**
 * The token endpoint (RFC 6749 §3.2): picks the grant, authenticates the
 * client, checks the client may use that grant (a resource server may use
 * none), and runs it with the parameters it declares (`GrantHandler.parameters`):
 * any other is ignored (RFC 6749 §3.2).
 */
export async function handleTokenRequest(input: TokenEndpointInput, deps: TokenEndpointDeps): Promise<TokenEndpointResult> {
  const { params } = input;
  const grantType = params.grant_type;
  if (grantType === undefined) throw new InvalidRequest('grant_type is required');
  const grant = deps.grants.get(grantType);
  if (!grant) {
    throw new UnsupportedGrantType(`grant_type is not supported; supported: ${[...deps.grants.keys()].join(', ')}`);
  }
  const client = await deps.authenticate(clientAuthInputOf(params, input));
  // A resource server checks tokens and obtains none, whatever its record says (docs/resource-servers.md).
  if (client.kind === 'resource_server') {
    throw new UnauthorizedClient('a resource server obtains no tokens: it checks them at /introspect');
  }
  if (!client.grants.includes(grant.grantType)) {
    throw new UnauthorizedClient(`this client is not allowed the ${grant.grantType} grant`);
  }
  const proofs = input.dpopProofs ?? [];
  // Without a proof, and not a fapi2 client: a bearer token, and nothing to await.
  const dpopJkt = proofs.length === 0 && client.profile !== 'fapi2' ? undefined : await tokenRequestProof(proofs, client, deps.dpop);
  const result = await grant.handle({ params: declaredParameters(params, grant.parameters), client, correlationId: input.correlationId, dpopJkt });
  return dpopJkt === undefined ? result : { ...result, dpopNonce: deps.dpop.nonces.issue() };
}

/**
 * The key of a token request's DPoP proof (RFC 9449 §5; docs/tokens.md,
 * "DPoP-bound tokens"), checked once the client is authenticated, so that
 * no stranger's request spends a proof's `jti`. A `fapi2` client must send
 * one, with a current server nonce (FAPI 2.0 §5.3.2.2): without a proof it
 * gets `invalid_dpop_proof`, without a nonce `use_dpop_nonce`. Any other
 * client may send one (a nonce is then checked only if the proof carries
 * one); without a proof its tokens are bearer tokens.
 */
async function tokenRequestProof(proofs: readonly string[], client: Client, dpop: TokenEndpointDeps['dpop']): Promise<string | undefined> {
  const fapi2 = client.profile === 'fapi2';
  if (proofs.length === 0 && !fapi2) return undefined;
  const proof = await verifyDpopProof({ proofs, method: 'POST', url: `${dpop.urls.authUrl}/token`, requireNonce: fapi2, at: 'token' }, dpop);
  return proof.jkt;
}

/** What every token request may carry whatever its grant: the grant type and client authentication (RFC 6749 §2.3.1, RFC 7521 §4.2). */
const COMMON_PARAMETERS: readonly string[] = ['grant_type', 'client_id', 'client_secret', 'client_assertion', 'client_assertion_type'];

/**
 * The parameters a grant is handed: those it declares, besides
 * {@link COMMON_PARAMETERS}. Any other is ignored (RFC 6749 §3.2), so it
 * never reaches the grant.
 */
export function declaredParameters(params: Readonly<Record<string, string>>, declared: readonly string[]): Readonly<Record<string, string>> {
  const kept: Record<string, string> = {};
  // Own names only; no array of entries made for every request.
  for (const name in params) {
    if (Object.hasOwn(params, name) && (COMMON_PARAMETERS.includes(name) || declared.includes(name))) kept[name] = params[name] as string;
  }
  return kept;
}
