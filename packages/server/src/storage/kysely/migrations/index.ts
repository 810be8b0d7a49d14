import type { Migration, MigrationProvider } from 'kysely';
import * as initial from './2026-11-21T10-00-initial.js';
import * as customers from './2026-11-21T12-00-customers.js';
import * as tokenLifecycle from './2026-11-21T14-00-token-lifecycle.js';
import * as onboarding from './2026-11-21T16-00-onboarding.js';
import * as journey from './2026-11-25T10-00-journey.js';
import * as keyRotation from './2026-11-25T12-00-key-rotation.js';
import * as clientTokenEnds from './2026-11-25T12-10-client-token-ends.js';
import * as changeSignals from './2026-11-25T12-20-change-signals.js';
import * as auditRequestId from './2026-11-25T14-00-audit-request-id.js';
import * as retention from './2026-11-25T14-10-retention.js';
import * as revocationSignals from './2026-11-25T16-00-revocation-signals.js';
import * as codeSent from './2026-11-25T18-00-code-sent.js';
import * as resourceServers from './2026-11-25T19-00-resource-servers.js';
import * as uiLocale from './2026-11-25T20-00-ui-locale.js';
import * as scopes from './2026-11-25T21-00-scopes.js';
import * as refreshReuse from './2026-11-27T10-00-refresh-reuse.js';
import * as databaseEnvironment from './2026-11-27T10-10-database-environment.js';
import * as journeyEndedBy from './2026-11-28T10-00-journey-ended-by.js';
import * as scopeDescriptions from './2026-11-28T10-00-scope-descriptions.js';
import * as authentication from './2026-11-28T11-00-authentication.js';
import * as credentialVersion from './2026-11-28T11-30-credential-version.js';
import * as passkeys from './2026-11-28T12-00-passkeys.js';
import * as passkeyUserHandle from './2026-11-28T13-00-passkey-user-handle.js';
import * as authorizationRequestAcr from './2026-11-28T14-00-authorization-request-acr.js';
import * as clientProfiles from './2026-11-28T15-00-client-profiles.js';
import * as pushedRequests from './2026-11-28T15-10-pushed-requests.js';
import * as dpop from './2026-11-28T15-20-dpop.js';
import * as schemaReleases from './2026-11-28T16-00-schema-releases.js';
import * as masterKeys from './2026-11-28T16-10-master-keys.js';

/** Every migration, by name; names sort in the order they apply. */
const MIGRATIONS: Record<string, Migration> = {
  '2026-11-21T10-00-initial': initial,
  '2026-11-21T12-00-customers': customers,
  '2026-11-21T14-00-token-lifecycle': tokenLifecycle,
  '2026-11-21T16-00-onboarding': onboarding,
  '2026-11-25T10-00-journey': journey,
  '2026-11-25T12-00-key-rotation': keyRotation,
  '2026-11-25T12-10-client-token-ends': clientTokenEnds,
  '2026-11-25T12-20-change-signals': changeSignals,
  '2026-11-25T14-00-audit-request-id': auditRequestId,
  '2026-11-25T14-10-retention': retention,
  '2026-11-25T16-00-revocation-signals': revocationSignals,
  '2026-11-25T18-00-code-sent': codeSent,
  '2026-11-25T19-00-resource-servers': resourceServers,
  '2026-11-25T20-00-ui-locale': uiLocale,
  '2026-11-25T21-00-scopes': scopes,
  '2026-11-27T10-00-refresh-reuse': refreshReuse,
  '2026-11-27T10-10-database-environment': databaseEnvironment,
  '2026-11-28T10-00-journey-ended-by': journeyEndedBy,
  '2026-11-28T10-00-scope-descriptions': scopeDescriptions,
  '2026-11-28T11-00-authentication': authentication,
  '2026-11-28T11-30-credential-version': credentialVersion,
  '2026-11-28T12-00-passkeys': passkeys,
  '2026-11-28T13-00-passkey-user-handle': passkeyUserHandle,
  '2026-11-28T14-00-authorization-request-acr': authorizationRequestAcr,
  '2026-11-28T15-00-client-profiles': clientProfiles,
  '2026-11-28T15-10-pushed-requests': pushedRequests,
  '2026-11-28T15-20-dpop': dpop,
  '2026-11-28T16-00-schema-releases': schemaReleases,
  '2026-11-28T16-10-master-keys': masterKeys,
};

/**
 * The oldest release whose code still runs on the schema these migrations
 * leave: the previous release, as long as every migration since it is
 * expand-only (docs/upgrades.md, "Migrations across releases"). Recorded
 * in `schema_releases` when this release migrates a database; an older
 * release refuses to start there.
 */
export const OLDEST_COMPATIBLE_RELEASE = '0.2.0';

/** Every migration's name, in the order they apply. */
export const MIGRATION_NAMES: readonly string[] = Object.keys(MIGRATIONS).sort();

/** The migrations by name (for the expand-only check, docs/upgrades.md). */
export function bundledMigrations(): Readonly<Record<string, Migration>> {
  return MIGRATIONS;
}

/** Serves the bundled migrations to Kysely's `Migrator` (no file-system scan, so it works from `dist/`). */
export const migrationProvider: MigrationProvider = {
  getMigrations: async () => MIGRATIONS,
};
