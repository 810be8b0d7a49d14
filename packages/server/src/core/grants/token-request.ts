import { clientAuthInputOf, type ClientAuthInput } from '../clients/client-authenticate.js';
import type { Client } from '../clients/client.js';
import { InvalidRequest, UnauthorizedClient, UnsupportedGrantType } from '../errors.js';
import type { TokenResult } from './grant.js';
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
}

/** What the token endpoint pipeline needs. */
export interface TokenEndpointDeps {
  readonly grants: GrantRegistry;
  authenticate(input: ClientAuthInput): Promise<Client>;
}

/**
 * The token endpoint (RFC 6749 §3.2): picks the grant, authenticates the
 * client, checks the client may use that grant (a resource server may use
 * none), and runs it with the parameters it declares (`GrantHandler.parameters`):
 * any other is ignored (RFC 6749 §3.2).
 */
export async function handleTokenRequest(input: TokenEndpointInput, deps: TokenEndpointDeps): Promise<TokenResult> {
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
  // Awaited, not returned: returning a promise from an async function takes extra microtask turns.
  return await grant.handle({ params: declaredParameters(params, grant.parameters), client, correlationId: input.correlationId });
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
  for (const [name, value] of Object.entries(params)) {
    if (COMMON_PARAMETERS.includes(name) || declared.includes(name)) kept[name] = value;
  }
  return kept;
}
