import { html, type SafeHtml } from './html.js';

/** The page frame every hosted page shares. */
export function layout(options: { title: string; body: SafeHtml; clientName?: string | undefined }): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${options.title} · Connect</title>
<link rel="stylesheet" href="/assets/connect.css">
</head>
<body>
<main class="page">
<div class="card">
<header class="brand"><span class="logo" aria-hidden="true">C</span><span class="brand-name">Connect</span></header>
${options.body}
</div>
<p class="footer">Secured by Connect. Never share your PIN or one-time code with anyone.</p>
</main>
</body>
</html>`.value;
}
