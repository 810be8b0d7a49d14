import type { Client } from '../../core/clients/client.js';
import { escapeControlCharacters } from '../../core/control-characters.js';
import type { Environment } from '../../core/environment.js';

/** What a command produced: a JSON document for `--json`, and text for people. */
export interface CommandResult {
  readonly json: unknown;
  readonly text: string;
}

/**
 * A usage mistake: printed with a hint to the `--help` of `command` (the
 * command's words, like `clients create`; the command that ran when not
 * given), exit status 2.
 */
export class UsageError extends Error {
  override readonly name = 'UsageError';
  readonly command: string | undefined;

  constructor(message: string, options: { command?: string } = {}) {
    super(message);
    this.command = options.command;
  }
}

/** The operator pressed Ctrl-C at a prompt: exit status 130, as for SIGINT. */
export class Interrupted extends Error {
  override readonly name = 'Interrupted';
}

/** An epoch-seconds timestamp as ISO 8601 (UTC). */
export function isoTime(epochSeconds: number): string {
  return new Date(epochSeconds * 1000).toISOString().replace('.000Z', 'Z');
}

/** The public view of a client: everything but the secret hash. */
export function clientView(client: Client, environment: Environment) {
  return {
    clientId: client.id,
    name: client.name,
    /** `consumer` or `resource_server` (docs/resource-servers.md). */
    kind: client.kind,
    redirectUri: client.redirectUri,
    grants: [...client.grants],
    requirePkce: client.requirePkce,
    /** The scopes it is registered with (docs/tokens.md, "Scopes"); `[]`: none. */
    scopes: [...client.scopes],
    /** What its scopes mean to customers, by scope, as the operator put it (`--scope-description`); `{}`: the pages' defaults. */
    scopeDescriptions: Object.fromEntries(client.scopes.filter((scope) => Object.hasOwn(client.scopeDescriptions, scope)).map((scope) => [scope, client.scopeDescriptions[scope] as string])),
    status: client.status,
    environment,
    createdAt: isoTime(client.createdAt),
    updatedAt: isoTime(client.updatedAt),
    /** Client access tokens issued at or before this time are refused (`clients disable`); `null`: none. */
    tokensEndedAt: client.tokensEndedAt === null ? null : isoTime(client.tokensEndedAt),
    /** `standard` or `fapi2` (docs/operator-guide.md, "FAPI 2.0 clients"). */
    profile: client.profile,
    /** Where its `private_key_jwt` keys come from: registered (their `kid`s) or its `jwks_uri`; `null`: none. */
    keys: client.jwksUri
      ? { source: 'jwks_uri' as const, jwksUri: client.jwksUri }
      : client.jwks
        ? { source: 'jwks' as const, kids: client.jwks.keys.map((key) => (typeof key.kid === 'string' ? key.kid : null)) }
        : null,
  };
}

/**
 * One line of human output holding stored values, as it may be printed on
 * a terminal: every control character (and U+2028, U+2029) in it written
 * as a visible escape (`\x1b`, `\x0a`), so that a value stored by anyone
 * (a client name, an ID a failed authentication claimed) can neither
 * colour, clear or move the operator's screen nor start a line of its own.
 * `--json` output needs none of this: JSON escapes them already.
 */
export function printable(line: string): string {
  return escapeControlCharacters(line);
}

/** Renders `label: value` lines with the values aligned, each line {@link printable}. */
export function table(rows: ReadonlyArray<readonly [string, string]>): string {
  const width = Math.max(...rows.map(([label]) => label.length)) + 1;
  return rows.map(([label, value]) => printable(`${`${label}:`.padEnd(width + 1)}${value}`)).join('\n') + '\n';
}
