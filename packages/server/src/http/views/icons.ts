import { SafeHtml } from './html.js';

/*
 * Small inline SVG icons for the hosted pages (no image files, no external
 * requests). Decorative: hidden from assistive technology, coloured by
 * `currentColor` from the stylesheet.
 */

function icon(className: string, paths: string): SafeHtml {
  return new SafeHtml(
    `<svg class="icon ${className}" viewBox="0 0 24 24" width="24" height="24" fill="none" stroke="currentColor" stroke-width="2" stroke-linecap="round" stroke-linejoin="round" aria-hidden="true" focusable="false">${paths}</svg>`,
  );
}

/** A padlock: the secure-connection cue. */
export const lockIcon = (className = 'icon-lock'): SafeHtml =>
  icon(className, '<rect x="5" y="11" width="14" height="10" rx="2"/><path d="M8 11V7a4 4 0 0 1 8 0v4"/>');

/** Two chain links: the Connect mark. */
export const linkIcon = (className = 'icon-link'): SafeHtml =>
  icon(className, '<path d="M10 14a4 4 0 0 0 5.66 0l3-3a4 4 0 0 0-5.66-5.66l-1 1"/><path d="M14 10a4 4 0 0 0-5.66 0l-3 3a4 4 0 0 0 5.66 5.66l1-1"/>');

/** A circled exclamation mark: something needs attention. */
export const alertIcon = (className = 'icon-alert'): SafeHtml =>
  icon(className, '<circle cx="12" cy="12" r="9"/><path d="M12 7.5v5"/><path d="M12 16.2v.1"/>');

/** A circled tick: it worked. */
export const checkIcon = (className = 'icon-check'): SafeHtml => icon(className, '<circle cx="12" cy="12" r="9"/><path d="m8 12.5 2.7 2.7L16 9.8"/>');

/** A shield: the reminder never to share codes. */
export const shieldIcon = (className = 'icon-shield'): SafeHtml =>
  icon(className, '<path d="M12 3 5 6v5c0 4.4 3 8.3 7 9.5 4-1.2 7-5.1 7-9.5V6l-7-3Z"/><path d="m9.5 12 1.8 1.8 3.2-3.3"/>');

/** A key: a passkey. */
export const keyIcon = (className = 'icon-key'): SafeHtml =>
  icon(className, '<circle cx="8" cy="15" r="4"/><path d="m10.85 12.15 8.4-8.4"/><path d="m15.5 7.5 2.5 2.5"/><path d="m18 5 2 2"/>');
