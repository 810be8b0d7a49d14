/**
 * The labels values are sealed with (`seal()` in `master-key.ts`), one per
 * kind of sealed stored value, so that a sealed value cannot be moved onto
 * another record; a master key rotation re-seals each under its own label
 * (`master-key-rotation.ts`).
 */

/** A stored `POST /tokens` response: its client and `Request-Reference-No`. */
export function idempotentResponseLabel(clientId: string, reference: string): string {
  return `tokens:${clientId}:${reference}`;
}

/** The access token a refresh minted, kept for the refreshes of its reuse interval: its session. */
export function reuseLabel(sid: string): string {
  return `refreshed-access:${sid}`;
}
