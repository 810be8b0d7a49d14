import { readFileSync } from 'node:fs';
import type { Environment } from '../../core/environment.js';
import type { PublicUrls } from '../../core/tokens/public-urls.js';
import { COMPONENTS, SERVERS } from './components.js';
import { isSandboxPath, PATHS } from './paths.js';
import type { OpenApiDocument, PathItem, Server } from './types.js';

/**
 * Connect's OpenAPI 3.1 description: every endpoint of the public
 * listener, with its parameters, bodies, statuses, headers and the JSON
 * Schemas (2020-12) of its answers. `GET /openapi.json` serves it with this
 * server's URLs (docs/consumer-guide.md, "The OpenAPI description"); the
 * tests check real responses against it.
 */

const DESCRIPTION = `Connect issues OAuth 2.0 tokens to API consumers (clients) and lets customers authorize them through hosted login pages.

Two public addresses: the **auth URL** (\`CONNECT_AUTH_URL\`, the issuer) serves the OAuth endpoints, discovery and the hosted pages; the **base URL** (\`CONNECT_BASE_URL\`, by default the auth URL) serves \`/tokens\` and the platform's APIs. The hosted pages and their stylesheet are at the root of the auth URL's host, which is the auth URL itself unless it has a path.

Errors of the JSON endpoints are \`{"error","error_description"}\` (RFC 6749 §5.2) with \`Cache-Control: no-store\`; the description is for people (printable ASCII without \`"\` or \`\\\`) and never repeats what the request sent: branch on \`error\`. Every 401 carries \`WWW-Authenticate\`; every 503 of an endpoint carries \`Retry-After\`. The browser routes (\`/authorize\`, the hosted pages, \`/sandbox/callback\`) answer errors with HTML pages instead. A path Connect does not serve answers \`404\` \`{"error":"not_found"}\`.

Every response carries \`X-Request-Id\` and the security headers \`X-Content-Type-Options: nosniff\`, \`X-Frame-Options: DENY\`, \`Referrer-Policy: no-referrer\`, \`Content-Security-Policy\` and \`Cross-Origin-Resource-Policy: same-origin\` (and \`Strict-Transport-Security\` in production). \`HEAD\` is answered wherever \`GET\` is.

The JSON schemas list exactly what this version sends; later versions may add optional fields, so ignore fields you do not know.

One server is one environment: \`/sandbox/*\` exists only in the sandbox. Prometheus metrics (\`GET /metrics\`) are served on a separate port (\`CONNECT_METRICS_PORT\`), not on this listener, and are not described here.`;

const TAGS = [
  { name: 'tokens', description: 'The OAuth token endpoint, introspection and revocation: client-authenticated forms.' },
  { name: 'customer tokens', description: "Refreshing a customer's access token with the client's own access token (`{base_url}`)." },
  { name: 'authorization', description: "The start of a customer's authorization." },
  { name: 'hosted pages', description: 'The pages a customer meets between `/authorize` and the redirect back: plain HTML forms.' },
  { name: 'resources', description: 'An example API protected by customer access tokens (`{base_url}`).' },
  { name: 'discovery', description: 'Server metadata, signing keys and this description.' },
  { name: 'operations', description: 'Liveness and readiness.' },
  { name: 'sandbox', description: 'Sandbox only: the SMS outbox and the callback page.' },
] as const;

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

let cached: OpenApiDocument | undefined;

/**
 * The description as kept in the repository: servers as variables
 * (`{authUrl}`, `{baseUrl}`, `{authOrigin}`), every path (sandbox ones
 * included).
 */
export function openApiDocument(): OpenApiDocument {
  cached ??= {
    openapi: '3.1.1',
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    info: { title: 'Connect', version: version(), description: DESCRIPTION },
    servers: [SERVERS.authUrl],
    tags: TAGS,
    paths: PATHS,
    components: COMPONENTS,
  };
  return cached;
}

/**
 * The description as this server serves it: its own URLs in `servers`, and
 * in production no `/sandbox/*` paths (which production does not have).
 */
export function servedDocument(urls: PublicUrls, environment: Environment): OpenApiDocument {
  const document = openApiDocument();
  const values: Record<string, string> = { authUrl: urls.authUrl, baseUrl: urls.baseUrl, authOrigin: originOf(urls.authUrl) };
  const fill = (server: Server): Server => ({
    url: server.url.replace(/\{(\w+)\}/g, (whole, name: string) => values[name] ?? whole),
    description: server.description,
  });
  const paths = Object.entries(document.paths)
    .filter(([path]) => environment === 'sandbox' || !isSandboxPath(path))
    .map(([path, item]): [string, PathItem] => [path, item.servers ? { ...item, servers: item.servers.map(fill) } : item]);
  return { ...document, servers: document.servers.map(fill), paths: Object.fromEntries(paths) };
}

/** `https://h.example` of `https://h.example/auth`; the URL itself when it cannot be parsed (not yet known). */
function originOf(url: string): string {
  return URL.canParse(url) ? new URL(url).origin : url;
}
