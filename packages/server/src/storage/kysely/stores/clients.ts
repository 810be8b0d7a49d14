import { sql, type Insertable, type Kysely, type Selectable, type Updateable } from 'kysely';
import { CLIENT_KINDS, CLIENT_PROFILES, isGrantType, type Client, type ClientJwks, type ClientKind, type ClientProfile, type ClientStatus } from '../../../core/clients/client.js';
import { formatScope, splitScope } from '../../../core/scopes.js';
import { NotFound } from '../../../core/storage-errors.js';
import type { ClientPatch, ClientStore } from '../../../core/clients/client-store.js';
import type { ClientsTable, Database } from './schema.js';
import { insertOrConflict } from './insert-or-conflict.js';

/** The Kysely {@link ClientStore}, shared by both engines. */
export function createClientStore(db: Kysely<Database>): ClientStore {
  return {
    async findClient(id) {
      const row = await db.selectFrom('clients').selectAll().where('id', '=', id).executeTakeFirst();
      return row && toClient(row);
    },

    async listClients() {
      const rows = await db.selectFrom('clients').selectAll().orderBy('created_at').orderBy('id').execute();
      return rows.map(toClient);
    },

    async renewSecretHash(id, which, expected, replacement) {
      const column = which === 'current' ? 'secret_hash' : 'previous_secret_hash';
      const result = await db
        .updateTable('clients')
        .set({ [column]: replacement })
        .where('id', '=', id)
        .where(column, '=', expected)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },

    async insertClient(client) {
      await insertOrConflict(db.insertInto('clients').values(toRow(client)), `client ${client.id} exists`);
    },

    async updateClient(id, patch, now) {
      const values: Updateable<ClientsTable> = { updated_at: now };
      if (patch.name !== undefined) values.name = patch.name;
      if (patch.redirectUri !== undefined) values.redirect_uri = patch.redirectUri;
      if (patch.grants !== undefined) values.grants = patch.grants.join(' ');
      if (patch.requirePkce !== undefined) values.require_pkce = patch.requirePkce ? 1 : 0;
      if (patch.scopes !== undefined) values.scopes = formatScope(patch.scopes);
      if (patch.scopeDescriptions !== undefined) values.scope_descriptions = JSON.stringify(patch.scopeDescriptions);
      if (patch.status !== undefined) values.status = patch.status;
      if (patch.secretHash !== undefined) values.secret_hash = patch.secretHash;
      if (patch.previousSecretHash !== undefined) values.previous_secret_hash = patch.previousSecretHash;
      if (patch.previousSecretExpiresAt !== undefined) values.previous_secret_expires_at = patch.previousSecretExpiresAt;
      if (patch.profile !== undefined) values.profile = patch.profile;
      if (patch.jwks !== undefined) values.jwks = patch.jwks === null ? null : JSON.stringify(patch.jwks);
      if (patch.jwksUri !== undefined) values.jwks_uri = patch.jwksUri;
      const row = await db.updateTable('clients').set(values).where('id', '=', id).returningAll().executeTakeFirst();
      if (!row) throw new NotFound(`client ${id} not found`);
      return toClient(row);
    },

    async changeClientStatus(id, change, now) {
      // One conditional update: of concurrent changes only one finds the
      // other status, and tokens_ended_at never moves back.
      const later = sql<number>`case when tokens_ended_at is not null and tokens_ended_at > ${change.tokensEndedAt} then tokens_ended_at else ${change.tokensEndedAt} end`;
      let update = db
        .updateTable('clients')
        .set({ status: change.status, tokens_ended_at: later, updated_at: now })
        .where('id', '=', id)
        .where('status', '<>', change.status);
      const { endedBy } = change;
      if (endedBy !== undefined) update = update.where((eb) => eb.or([eb('tokens_ended_at', 'is', null), eb('tokens_ended_at', '<=', endedBy)]));
      const row = await update.returningAll().executeTakeFirst();
      return row && toClient(row);
    },
  };
}

function toClient(row: Selectable<ClientsTable>): Client {
  return {
    id: row.id,
    name: row.name,
    secretHash: row.secret_hash,
    kind: toKind(row.kind),
    redirectUri: row.redirect_uri === '' ? null : row.redirect_uri,
    grants: row.grants.split(' ').filter(isGrantType),
    requirePkce: row.require_pkce === 1,
    scopes: splitScope(row.scopes),
    scopeDescriptions: toScopeDescriptions(row.scope_descriptions),
    status: row.status as ClientStatus,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
    previousSecretHash: row.previous_secret_hash,
    previousSecretExpiresAt: row.previous_secret_expires_at === null ? null : Number(row.previous_secret_expires_at),
    tokensEndedAt: row.tokens_ended_at === null ? null : Number(row.tokens_ended_at),
    profile: toProfile(row.profile),
    jwks: toJwks(row.jwks),
    jwksUri: row.jwks_uri,
  };
}

/** The stored JSON object of scope descriptions: its string entries, in a null-prototype object (a scope may be named `__proto__`). */
function toScopeDescriptions(value: string): Readonly<Record<string, string>> {
  const parsed: unknown = JSON.parse(value);
  const descriptions: Record<string, string> = Object.create(null);
  if (parsed && typeof parsed === 'object') {
    for (const [scope, text] of Object.entries(parsed)) if (typeof text === 'string') descriptions[scope] = text;
  }
  return descriptions;
}

function toKind(value: string): ClientKind {
  if (!(CLIENT_KINDS as readonly string[]).includes(value)) throw new Error(`unknown client kind ${value}`);
  return value as ClientKind;
}

// An unknown profile is never read as a laxer one.
function toProfile(value: string): ClientProfile {
  if (!(CLIENT_PROFILES as readonly string[]).includes(value)) throw new Error(`unknown client profile ${value}`);
  return value as ClientProfile;
}

/** The stored JWK Set: its `keys` that are JSON objects; `null` when none is stored. */
function toJwks(value: string | null): ClientJwks | null {
  if (value === null) return null;
  const parsed: unknown = JSON.parse(value);
  const keys = parsed && typeof parsed === 'object' && Array.isArray((parsed as { keys?: unknown }).keys) ? (parsed as { keys: unknown[] }).keys : [];
  return { keys: keys.filter((key): key is Record<string, unknown> => key !== null && typeof key === 'object' && !Array.isArray(key)) };
}

function toRow(client: Client): Insertable<ClientsTable> {
  return {
    id: client.id,
    name: client.name,
    secret_hash: client.secretHash,
    kind: client.kind,
    redirect_uri: client.redirectUri ?? '',
    grants: client.grants.join(' '),
    require_pkce: client.requirePkce ? 1 : 0,
    scopes: formatScope(client.scopes),
    scope_descriptions: JSON.stringify(client.scopeDescriptions),
    status: client.status,
    created_at: client.createdAt,
    updated_at: client.updatedAt,
    previous_secret_hash: client.previousSecretHash,
    previous_secret_expires_at: client.previousSecretExpiresAt,
    tokens_ended_at: client.tokensEndedAt,
    profile: client.profile,
    jwks: client.jwks === null ? null : JSON.stringify(client.jwks),
    jwks_uri: client.jwksUri,
  };
}
