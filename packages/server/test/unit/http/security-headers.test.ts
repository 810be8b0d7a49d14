import { describe, expect, it } from 'vitest';
import { securityHeaders } from '../../../src/http/plugins/security-headers.js';

/**
 * The whole policy, header by header: a helmet release that adds a header
 * or changes a default changes what every response carries, and must be a
 * decision, not a side effect of an upgrade.
 */
describe('securityHeaders', () => {
  const API = {
    'content-security-policy': "default-src 'none';frame-ancestors 'none'",
    'cross-origin-resource-policy': 'same-origin',
    'referrer-policy': 'no-referrer',
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
  };

  it('are exactly the API policy outside production', () => {
    expect(securityHeaders({ hsts: false })).toEqual(API);
  });

  it('add HSTS for a year, subdomains included, in production', () => {
    expect(securityHeaders({ hsts: true })).toEqual({ ...API, 'strict-transport-security': 'max-age=31536000; includeSubDomains' });
  });
});
