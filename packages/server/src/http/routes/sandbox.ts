import type { FastifyInstance } from 'fastify';
import { parseMobile } from '../../core/customers/mobile.js';
import { InvalidRequest } from '../../core/errors.js';
import type { SmsOutboxStore } from '../../core/sms/outbox-store.js';

/**
 * `GET /sandbox/messages?to=<E164>` (docs/operator-guide.md, "One server,
 * one environment"): the sandbox SMS outbox,
 * newest first. Registered in the sandbox only; production has no
 * `/sandbox/*` routes.
 */
export async function sandboxRoutes(app: FastifyInstance, deps: { outbox: SmsOutboxStore }): Promise<void> {
  app.get<{ Querystring: Record<string, string | string[] | undefined> }>('/sandbox/messages', async (request, reply) => {
    const to = request.query.to;
    const mobile = typeof to === 'string' ? parseMobile(to) : undefined;
    if (!mobile) throw new InvalidRequest('to must be one mobile number in E.164 format, e.g. +639171234567');
    reply.header('cache-control', 'no-store');
    const messages = await deps.outbox.listOutboxMessages(mobile.e164, 50);
    return {
      messages: messages.map((m) => ({ to: m.to, body: m.body, sentAt: new Date(m.sentAt * 1000).toISOString() })),
    };
  });
}
