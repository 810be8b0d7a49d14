import { html, type SafeHtml } from './html.js';
import { linkIcon, lockIcon, shieldIcon } from './icons.js';

/** The page frame every hosted page shares: brand bar, the page's card, and the safety reminder. */
export function layout(options: { title: string; body: SafeHtml; clientName?: string | undefined }): string {
  const title = options.clientName ? `${options.title} · ${options.clientName} · Connect` : `${options.title} · Connect`;
  return html`<!doctype html>
<html lang="en">
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
<span class="secure">${lockIcon()}<span>Secure sign-in</span></span>
</header>
<main class="card">
${options.body}
</main>
<footer class="footer">
<p class="safety">${shieldIcon()}<span>Never share your PIN or one-time code with anyone. Connect will never ask for them by phone, SMS or email.</span></p>
</footer>
</div>
</body>
</html>`.value;
}
