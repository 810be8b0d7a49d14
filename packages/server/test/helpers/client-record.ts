import type { Client } from '../../src/core/clients/client.js';

/** 2026-01-01T00:00:00Z, the time the test client records were made. */
export const CLIENT_CREATED_AT = 1_767_225_600;

/**
 * A stored client record as the core sees it: an active sandbox client with
 * no secret in rotation. Tests pass what they depend on as `overrides`.
 */
export function clientRecord(overrides: Partial<Client> = {}): Client {
  return {
    id: 'cid_sandbox_acme',
    name: 'Acme Shop',
    secretHash: 'unused',
    kind: 'consumer',
    redirectUri: 'https://acme.example/cb',
    grants: ['client_credentials', 'authorization_code'],
    requirePkce: false,
    scopes: [],
    scopeDescriptions: {},
    status: 'active',
    createdAt: CLIENT_CREATED_AT,
    updatedAt: CLIENT_CREATED_AT,
    previousSecretHash: null,
    previousSecretExpiresAt: null,
    tokensEndedAt: null,
    profile: 'standard',
    jwks: null,
    jwksUri: null,
    ...overrides,
  };
}
