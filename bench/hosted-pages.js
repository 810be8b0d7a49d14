// The customer's hosted pages as a browser sees them: fetch with a cookie
// jar, the form's action and its hidden `csrf_token`. Shared by
// customer-bench.js and pin-flood.js.
import { fail } from './processes.js';

/**
 * A browser: fetch with a cookie jar, never following redirects.
 * `headers` go with every request, and a request's own `headers` with it
 * (`X-Forwarded-For`, say).
 */
export function browser(base, { headers: always = {}, timeoutMs = 10_000 } = {}) {
  const jar = new Map();
  return {
    jar,
    async request(path, { method = 'GET', form, headers: extra } = {}) {
      const headers = { ...always, ...extra };
      if (jar.size > 0) headers.cookie = [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
      let body;
      if (form) {
        headers['content-type'] = 'application/x-www-form-urlencoded';
        body = new URLSearchParams(form).toString();
      }
      const response = await fetch(base + path, { method, headers, body, redirect: 'manual', signal: AbortSignal.timeout(timeoutMs) });
      for (const set of response.headers.getSetCookie()) {
        const [pair, ...attributes] = set.split(';');
        const eq = pair.indexOf('=');
        const name = pair.slice(0, eq).trim();
        const value = pair.slice(eq + 1).trim();
        const expired = value === '' || attributes.some((a) => /^\s*max-age=(0|-)/i.test(a));
        if (expired) jar.delete(name);
        else jar.set(name, value);
      }
      return { status: response.status, location: response.headers.get('location'), text: await response.text() };
    },
  };
}

/** The hidden `csrf_token` of a hosted page's form. */
export function hiddenCsrf(html) {
  const tag = (html.match(/<input\b[^>]*>/g) ?? []).find((t) => /\sname="csrf_token"/.test(t));
  const value = tag && /\svalue="([^"]*)"/.exec(tag)?.[1];
  if (!value) fail('no csrf_token on the hosted page');
  return value.replace(/&amp;/g, '&');
}

/** The `action` of a hosted page's form (a path). */
export function formAction(html) {
  const form = /<form\b[^>]*>/.exec(html)?.[0];
  const action = form && /\saction="([^"]*)"/.exec(form)?.[1];
  if (!action?.startsWith('/')) fail('no form action on the hosted page');
  return action.replace(/&amp;/g, '&');
}

/** `GET /authorize` for a code, as a client sends its customer. */
export function authorizePath(clientId, redirectUri) {
  return `/authorize?${new URLSearchParams({ response_type: 'code', client_id: clientId, redirect_uri: redirectUri, state: 'bench' })}`;
}
