import { html, type SafeHtml } from './html.js';
import { linkIcon, lockIcon, shieldIcon } from './icons.js';
import type { Language } from './messages/index.js';

/**
 * The page frame every hosted page shares: brand bar, the page's card, and
 * the safety reminder, in the page's language (`<html lang>`).
 */
export function layout(options: { language: Language; title: SafeHtml | string; body: SafeHtml; clientName?: string | undefined }): string {
  const { locale, text } = options.language;
  const title = options.clientName ? html`${options.title} · ${options.clientName} · Connect` : html`${options.title} · Connect`;
  return html`<!doctype html>
<html lang="${locale}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<meta name="referrer" content="no-referrer">
<meta name="color-scheme" content="light">
<title>${title}</title>
<link rel="stylesheet" href="/assets/connect.css">
</head>
<body>
<div class="shell">
<header class="topbar">
<span class="brand"><span class="brand-mark">${linkIcon()}</span><span class="brand-name">Connect</span></span>
<span class="secure">${lockIcon()}<span>${text.page.secureSignIn}</span></span>
</header>
<main class="card">
${options.body}
</main>
<footer class="footer">
<p class="safety">${shieldIcon()}<span>${text.page.safetyReminder}</span></p>
</footer>
</div>
</body>
</html>`.value;
}
