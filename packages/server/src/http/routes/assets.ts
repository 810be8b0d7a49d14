import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { PASSKEY_SCRIPT, PASSKEY_SCRIPT_PATH, RESEND_COUNTDOWN_PATH, RESEND_COUNTDOWN_SCRIPT, WEBAUTHN_BROWSER_PATH } from '../views/scripts.js';
import { STYLESHEET } from '../views/styles.js';

/**
 * @simplewebauthn/browser's own browser bundle (UMD, global
 * `SimpleWebAuthnBrowser`), as its package ships it: Connect serves it
 * itself, so the pages load no script from another origin.
 */
function webAuthnBrowserBundle(): string {
  // The package's `exports` name only its modules: its root is found from its CommonJS entry, `script/index.js`.
  const entry = createRequire(import.meta.url).resolve('@simplewebauthn/browser');
  return readFileSync(join(dirname(dirname(entry)), 'dist', 'bundle', 'index.umd.min.js'), 'utf8');
}

/**
 * The hosted pages' static files, cacheable and revalidated by ETag:
 * `GET /assets/connect.css`, the stylesheet; the one-time-PIN page's
 * countdown script and the passkey pages' script (views/scripts.ts); and
 * the browser side of WebAuthn, @simplewebauthn/browser's bundle.
 */
export async function assetRoutes(app: FastifyInstance): Promise<void> {
  const asset = (path: string, type: string, body: string) => {
    const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 16)}"`;
    app.get(path, async (request, reply) => {
      reply.header('cache-control', 'public, max-age=3600').header('etag', etag);
      if (request.headers['if-none-match'] === etag) return reply.code(304).send();
      return reply.type(type).send(body);
    });
  };
  const script = 'text/javascript; charset=utf-8';
  asset('/assets/connect.css', 'text/css; charset=utf-8', STYLESHEET);
  asset(RESEND_COUNTDOWN_PATH, script, RESEND_COUNTDOWN_SCRIPT);
  asset(WEBAUTHN_BROWSER_PATH, script, webAuthnBrowserBundle());
  asset(PASSKEY_SCRIPT_PATH, script, PASSKEY_SCRIPT);
}
