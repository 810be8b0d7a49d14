import type { GrantType } from '../clients/client.js';
import type { GrantHandler, TokenRequest, TokenResult } from './grant.js';

/** A grant handler with its dependencies bound. */
export interface BoundGrant {
  readonly grantType: GrantType;
  readonly parameters: readonly string[];
  handle(request: TokenRequest): Promise<TokenResult>;
}

/** The grants this server answers, keyed by `grant_type`. */
export type GrantRegistry = ReadonlyMap<string, BoundGrant>;

/** Binds a handler to its dependencies. */
export function bindGrant<Deps>(handler: GrantHandler<Deps>, deps: Deps): BoundGrant {
  return {
    grantType: handler.grantType,
    parameters: handler.parameters,
    handle: (request) => handler.handle(request, deps),
  };
}

/** Builds the registry; a grant type may be registered only once. */
export function createGrantRegistry(grants: readonly BoundGrant[]): GrantRegistry {
  const registry = new Map<string, BoundGrant>();
  for (const grant of grants) {
    if (registry.has(grant.grantType)) throw new Error(`grant ${grant.grantType} registered twice`);
    registry.set(grant.grantType, grant);
  }
  return registry;
}
