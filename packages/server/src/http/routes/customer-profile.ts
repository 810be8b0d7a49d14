import type { FastifyInstance } from 'fastify';
import type { CustomerAccessCheck } from '../../core/tokens/customer-access-check.js';
import { maskedMobile } from '../../core/customers/mobile.js';
import { InvalidToken } from '../../core/errors.js';
import { dpopProofsOf, pathOf } from '../plugins/dpop-headers.js';
import type { CustomerStore } from '../../core/customers/customer-store.js';

/**
 * `GET {base_url}/customer/profile`: an example of a protected platform API.
 * It accepts a customer access token only through the resource-server check
 * (`createCustomerAccessCheck`) and answers with the customer's masked
 * profile. Real platform APIs use the same check.
 */
export async function customerProfileRoutes(
  app: FastifyInstance,
  deps: { check: CustomerAccessCheck; customers: Pick<CustomerStore, 'findCustomer'>; baseUrl(): string },
): Promise<void> {
  app.get('/customer/profile', async (request, reply) => {
    // Bearer, or DPoP with a proof for this method and the published URL (docs/resource-servers.md, "DPoP-bound tokens").
    const access = await deps.check.verifyRequest({
      authorization: request.headers.authorization,
      dpopProofs: dpopProofsOf(request),
      method: request.method,
      url: `${deps.baseUrl()}${pathOf(request)}`,
    });
    // RFC 9449 §9: a fresh nonce with every answer to a DPoP request.
    if (access.jkt !== null) reply.header('dpop-nonce', deps.check.dpopNonce());
    const customer = await deps.customers.findCustomer(access.profileId);
    if (!customer) throw new InvalidToken('the customer of this token no longer exists');
    reply.header('cache-control', 'no-store');
    return {
      profileId: customer.profileId,
      userId: maskedMobile(customer.mobile, 'user_id'),
      clientId: access.clientId,
      tokenExpiresAt: access.expiresAt,
    };
  });
}
