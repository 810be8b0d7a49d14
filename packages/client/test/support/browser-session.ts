/**
 * Drives Connect's hosted pages the way a browser with JavaScript off would,
 * with plain fetch: a cookie jar, the 303s, the forms with their
 * `csrf_token`, and the one-time PIN read from the sandbox outbox.
 */
export class BrowserSession {
  readonly cookies = new Map<string, string>();

  constructor(readonly connectUrl: string) {}

  /** One request with this session's cookies; redirects are not followed. */
  async request(url: string, init: { method?: string; form?: Record<string, string> } = {}): Promise<Response> {
    const headers: Record<string, string> = {};
    if (this.cookies.size > 0) headers.cookie = [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    if (init.form) headers['content-type'] = 'application/x-www-form-urlencoded';
    const response = await fetch(new URL(url, this.connectUrl), {
      method: init.method ?? 'GET',
      headers,
      ...(init.form ? { body: new URLSearchParams(init.form).toString() } : {}),
      redirect: 'manual',
      signal: AbortSignal.timeout(10_000),
    });
    for (const line of response.headers.getSetCookie()) {
      const [pair = ''] = line.split(';');
      const at = pair.indexOf('=');
      const name = pair.slice(0, at).trim();
      const value = pair.slice(at + 1).trim();
      if (value === '' || /max-age=0/i.test(line) || /expires=Thu, 01 Jan 1970/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return response;
  }

  /**
   * Opens `authorizeUrl` and goes through login and one-time PIN when a
   * page is shown. Returns the URL Connect finally redirects to (the
   * callback), or throws with what the page said.
   */
  async authorize(authorizeUrl: string, customer: { mobile: string; pin: string }, choice: 'login' | 'cancel' | 'no_passkey' = 'login'): Promise<string> {
    let response = await this.request(authorizeUrl);
    let location = expectRedirect(response);
    if (!location.startsWith('/')) return location; // a live session, or an error redirect
    response = await this.request(location);
    let page = await expectPage(response);
    if (choice !== 'login') return expectRedirect(await this.submit(page, { action: choice }));

    const mobile = findInput(page, 'mobile');
    const fields: Record<string, string> = { pin: customer.pin, action: 'login' };
    fields.mobile = mobile && /\sreadonly[\s>=]/.test(mobile) ? attribute(mobile, 'value') ?? '' : customer.mobile;
    location = expectRedirect(await this.submit(page, fields));
    page = await expectPage(await this.request(location));
    const otp = await this.latestOtp(customer.mobile);
    return expectRedirect(await this.submit(page, { otp, action: 'verify' }));
  }

  /** The newest one-time PIN in the sandbox outbox for `mobile`. */
  async latestOtp(mobile: string): Promise<string> {
    const response = await fetch(`${this.connectUrl}/sandbox/messages?to=${encodeURIComponent(mobile)}`, { signal: AbortSignal.timeout(10_000) });
    const { messages } = (await response.json()) as { messages: Array<{ body: string }> };
    const code = /\b(\d{6})\b/.exec(messages[0]?.body ?? '')?.[1];
    if (!code) throw new Error(`no one-time PIN was texted to ${mobile}`);
    return code;
  }

  private submit(page: string, fields: Record<string, string>): Promise<Response> {
    const form = /<form\b[^>]*>/.exec(page)?.[0] ?? '';
    const action = attribute(form, 'action');
    const csrf = attribute(findInput(page, 'csrf_token') ?? '', 'value');
    if (!action || !csrf) throw new Error('the page has no form with a csrf_token');
    return this.request(action, { method: 'POST', form: { csrf_token: csrf, ...fields } });
  }
}

function expectRedirect(response: Response): string {
  const location = response.headers.get('location');
  if (response.status !== 303 || !location) throw new Error(`expected a 303, got HTTP ${response.status}`);
  return location;
}

async function expectPage(response: Response): Promise<string> {
  const body = await response.text();
  if (response.status !== 200) throw new Error(`expected a page, got HTTP ${response.status}: ${body.replace(/<[^>]*>/g, ' ').replace(/\s+/g, ' ').slice(0, 300)}`);
  return body;
}

function findInput(html: string, name: string): string | undefined {
  return (html.match(/<input\b[^>]*>/g) ?? []).find((tag) => attribute(tag, 'name') === name);
}

function attribute(tag: string, name: string): string | undefined {
  const match = new RegExp(`\\s${name}(?:="([^"]*)")?(?=[\\s>/])`).exec(tag);
  if (!match) return undefined;
  return (match[1] ?? '').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}
