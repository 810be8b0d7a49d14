import type { FastifyInstance } from 'fastify';
import type { Client } from '../../core/clients/client.js';
import type { Clock } from '../../core/clock.js';
import { parseMobile } from '../../core/customers/mobile.js';
import { InvalidRequest } from '../../core/errors.js';
import { hashCode } from '../../core/codes/authorization-code.js';
import type { AuthorizationCodeStore } from '../../core/codes/code-store.js';
import type { SmsOutboxStore } from '../../core/sms/outbox-store.js';
import type { PublicUrls } from '../../core/tokens/public-urls.js';
import { DEMO_CLIENT_NAME, demoClientSecret } from '../../demo/seed-demo.js';
import { pageLanguage, sendPage } from '../plugins/hosted-pages.js';
import { sandboxCallbackPage } from '../views/sandbox-callback.js';

/** What the sandbox's routes read. */
export interface SandboxRouteDeps {
  readonly outbox: SmsOutboxStore;
  readonly codes: Pick<AuthorizationCodeStore, 'findAuthorizationCode'>;
  findClient(id: string): Promise<Client | undefined>;
  readonly urls: PublicUrls;
  /** `Runtime.demoKey`: the demo client's secret is shown in its exchange command. */
  readonly demoKey: Uint8Array;
  readonly codeSeconds: number;
  readonly clock: Clock;
}

/** The parameters a redirect back to a client can carry, in the order the page lists them. */
const CALLBACK_PARAMETERS = ['code', 'state', 'userId', 'profileId', 'iss', 'error', 'error_description'] as const;

/**
 * The sandbox's own routes (docs/operator-guide.md, "One server, one
 * environment"); production has no `/sandbox/*` routes.
 *
 * - `GET /sandbox/messages?to=<E164>`: the SMS outbox, newest first.
 * - `GET /sandbox/callback`: a page that shows what a redirect back to a
 *   client brought and, for a code, the command that exchanges it
 *   (docs/consumer-guide.md, "Try it in the sandbox").
 */
export async function sandboxRoutes(app: FastifyInstance, deps: SandboxRouteDeps): Promise<void> {
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

  app.get<{ Querystring: Record<string, string | string[] | undefined> }>('/sandbox/callback', { config: { html: true } }, async (request, reply) => {
    const first = (name: string): string | undefined => {
      const value = request.query[name];
      return Array.isArray(value) ? value[0] : value;
    };
    const received = CALLBACK_PARAMETERS.flatMap((name) => {
      const value = first(name);
      return value === undefined ? [] : [[name, value] as const];
    });
    const error = first('error');
    const code = error === undefined ? first('code') : undefined;
    const exchange = code === undefined ? undefined : await exchangeCommand(code, deps);
    return sendPage(
      reply,
      200,
      sandboxCallbackPage({ received, error, code, command: exchange?.command, codeProblem: exchange?.problem, codeSeconds: exchange?.codeSeconds ?? deps.codeSeconds }),
      // A page for developers, in English.
      { language: pageLanguage(request, 'en') },
    );
  });
}

/**
 * The `curl` command that exchanges `code` at the token endpoint, with the
 * client's ID and registered redirect URI, and the demo client's secret
 * (a sandbox credential `npm start` prints anyway); any other client's
 * secret is left for the developer to fill in.
 */
async function exchangeCommand(code: string, deps: SandboxRouteDeps): Promise<{ command?: string; problem?: string; codeSeconds?: number }> {
  const now = deps.clock.nowSeconds();
  const record = /^[A-Za-z0-9_-]{43}$/.test(code) ? await deps.codes.findAuthorizationCode(hashCode(code)) : undefined;
  if (!record) return { problem: 'Connect does not know this code: it was mistyped, or it expired and was deleted.' };
  if (record.consumedAt !== null || record.expiresAt <= now) return { problem: 'This code was exchanged already or has expired: start a new sign-in for a new one.' };
  const client = await deps.findClient(record.clientId);
  if (client?.profile === 'fapi2') {
    // Its exchange needs a new client assertion and a DPoP proof, which no shell line makes (docs/consumer-guide.md, "FAPI 2.0").
    return {
      problem: `This client is held to FAPI 2.0: it exchanges the code within ${record.expiresAt - record.createdAt} seconds with a client assertion and a DPoP proof (the SDK makes both), so there is no command to copy.`,
    };
  }
  // Any other client's secret is left to the shell, so it is quoted to expand.
  const credentials =
    client?.name === DEMO_CLIENT_NAME && client.kind === 'consumer' ? shellQuote(`${record.clientId}:${demoClientSecret(deps)}`) : `"${record.clientId}:$CLIENT_SECRET"`;
  const parts = [
    'curl -s',
    `-u ${credentials}`,
    '-d grant_type=authorization_code',
    `--data-urlencode ${shellQuote(`code=${code}`)}`,
    `--data-urlencode ${shellQuote(`redirect_uri=${record.redirectUri}`)}`,
    // The verifier is the client's own secret; the page cannot know it.
    ...(record.codeChallenge === null ? [] : ['--data-urlencode "code_verifier=$CODE_VERIFIER"']),
    shellQuote(`${deps.urls.authUrl}/token`),
  ];
  // How long this code lives: CONNECT_CODE_TTL, or 60 seconds for a fapi2 client (docs/journey.md, "The code").
  return { command: parts.join(' '), codeSeconds: record.expiresAt - record.createdAt };
}

/** `value` as one POSIX shell word. */
function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}
