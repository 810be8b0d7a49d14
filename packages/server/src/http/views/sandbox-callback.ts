import { html, type SafeHtml } from './html.js';
import { layout } from './layout.js';
import { languageOf } from './messages/index.js';

/** What came back to the sandbox's callback page, and how to go on with it. */
export interface CallbackView {
  /** The query the redirect carried, as sent (`code`, `state`, `userId`, `profileId`, `iss`, or `error`, `error_description`). */
  readonly received: ReadonlyArray<readonly [string, string]>;
  readonly error: string | undefined;
  readonly code: string | undefined;
  /** The command that exchanges the code, when the code is one Connect issued and has not seen redeemed or ended. */
  readonly command: string | undefined;
  /** Why there is no command for a code. */
  readonly codeProblem: string | undefined;
  readonly codeSeconds: number;
}

/**
 * The sandbox's callback page (docs/consumer-guide.md, "Try it in the
 * sandbox"): a developer's page, in English, showing what a redirect back
 * to a client brought, and for a code the one command that exchanges it.
 */
export function sandboxCallbackPage(view: CallbackView): string {
  return layout({ language: languageOf('en'), title: 'Sandbox callback', body: callbackBody(view) });
}

function callbackBody(view: CallbackView): SafeHtml {
  if (view.received.length === 0) {
    return html`<h1>Nothing came back yet</h1>
<p class="lead">This sandbox page shows what a sign-in sends back to a client whose redirect URI is this page, like the demo client's. Open the login link that <code>npm start</code> printed, sign in, and you land here with a code.</p>`;
  }
  const table = html`<table class="received">
<caption>What the redirect brought</caption>
<tbody>
${view.received.map(([name, value]) => html`<tr><th scope="row">${name}</th><td><code>${value}</code></td></tr>`)}
</tbody>
</table>`;
  if (view.error !== undefined) {
    return html`<h1>The sign-in ended with an error</h1>
<p class="lead">The client gets <code>error=${view.error}</code>. Nothing to exchange; start a new sign-in.</p>
${table}`;
  }
  const next = view.command
    ? html`<h2>Exchange the code</h2>
<p>Run this within ${view.codeSeconds} seconds; a code works once:</p>
<pre class="command"><code id="exchange-command">${view.command}</code></pre>`
    : html`<p class="lead">${view.codeProblem ?? ''}</p>`;
  return html`<h1>A code came back</h1>
${table}
${next}`;
}
