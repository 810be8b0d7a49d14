import type { Authentication } from '../../../core/authentication.js';

/** The columns a table keeps an {@link Authentication} in (`amr` space-separated); all `null` when unknown. */
export interface AuthenticationColumns {
  readonly acr: string | null;
  readonly amr: string | null;
  readonly auth_time: number | null;
}

/** An {@link Authentication} as its columns. */
export function authenticationColumns(authentication: Authentication | null): AuthenticationColumns {
  return authentication
    ? { acr: authentication.acr, amr: authentication.amr.join(' '), auth_time: authentication.authTime }
    : { acr: null, amr: null, auth_time: null };
}

/** The {@link Authentication} of a row; `null` when it has none (rows from before migration `2026-11-28T11-00-authentication`). */
export function authenticationOfRow(row: { acr: string | null; amr: string | null; auth_time: number | string | null }): Authentication | null {
  if (row.acr === null || row.amr === null || row.auth_time === null) return null;
  return { acr: row.acr, amr: row.amr.split(' ').filter((method) => method !== ''), authTime: Number(row.auth_time) };
}
