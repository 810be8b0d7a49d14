import type { FastifyInstance } from 'fastify';
import type { CustomerAccessCheck } from '../../core/tokens/customer-access-check.js';
import { maskedMobile } from '../../core/customers/mobile.js';
import { InvalidToken, presentsToken } from '../../core/errors.js';
import type { CustomerStore } from '../../core/customers/customer-store.js';

/**
 * `GET {base_url}/customer/profile`: an example of a protected platform API.
 * It accepts a customer access token only through the resource-server check
 * (`createCustomerAccessCheck`) and answers with the customer's masked
 * profile. Real platform APIs use the same check.
 */
export async function customerProfileRoutes(
  app: FastifyInstance,
  deps: { check: CustomerAccessCheck; customers: Pick<CustomerStore, 'findCustomer'> },
): Promise<void> {
  app.get('/customer/profile', async (request, reply) => {
    const authorization = request.headers.authorization;
    const match = /^Bearer +(\S+) *$/i.exec(authorization ?? '');
    // A Bearer or DPoP header that is not one well-formed Bearer token is a bad token, not a missing one.
    if (!match?.[1] && presentsToken(authorization)) throw new InvalidToken('the access token is invalid or expired');
    const access = await deps.check.verify(match?.[1]);
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
