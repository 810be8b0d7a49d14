/**
 * Who did what an audit event records (docs/operator-guide.md, "The audit
 * log"): an operator at the command line, a client, a client address (a
 * customer's browser, or `*` for many addresses at once), or Connect itself.
 */
export type Actor =
  | { readonly kind: 'operator'; readonly name: string }
  | { readonly kind: 'client'; readonly clientId: string }
  | { readonly kind: 'address'; readonly ip: string }
  | { readonly kind: 'system' };

/** An actor as the audit log stores and lists it: `cli:<user>`, `client:<id>`, `ip:<address>`, `system`. */
export type AuditActor = `cli:${string}` | `client:${string}` | `ip:${string}` | 'system';

/**
 * The stored form of `actor`.
 *
 * @example auditActor({ kind: 'operator', name: 'ops' }) === 'cli:ops'
 * @example auditActor({ kind: 'address', ip: '203.0.113.7' }) === 'ip:203.0.113.7'
 */
export function auditActor(actor: Actor): AuditActor {
  switch (actor.kind) {
    case 'operator':
      return `cli:${actor.name}`;
    case 'client':
      return `client:${actor.clientId}`;
    case 'address':
      return `ip:${actor.ip}`;
    case 'system':
      return 'system';
  }
}
