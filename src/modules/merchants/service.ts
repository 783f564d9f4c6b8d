/** The API-key lifecycle the operator drives: issue, approve restricted scopes, change, rotate. */
import type { Selectable, Transaction } from 'kysely';
import type { Database, Environment, Db } from '../../db/schema.js';
import type { ApiKeysTable } from '../../platform/tables.js';
import { ApiError } from '../../platform/errors.js';
import { newId, randomToken, sha256Hex } from '../../platform/ids.js';
import { findKey, firstSuccessor, insertKey, nextTokenGenerationSql, setKeyExpiry, updateKeyRow } from './queries.js';
import { requireAllowlist, requireFutureExpiry, splitScopes, stopsTokens } from './rules.js';
import { isoOrNull } from '../../platform/dates.js';

export interface KeyView {
  id: string;
  merchant_id: string;
  client_id: string;
  environment: Environment;
  scopes: string[];
  pending_scopes: string[];
  ip_allowlist: string;
  disabled: boolean;
  expires_at: string | null;
  created_at: string;
}

export interface KeyWithSecrets extends KeyView {
  api_key: string;
  signing_key: string;
}

function view(row: Selectable<ApiKeysTable>): KeyView {
  return {
    id: row.id,
    merchant_id: row.merchant_id,
    client_id: row.client_id,
    environment: row.environment,
    scopes: row.scopes,
    pending_scopes: row.pending_scopes,
    ip_allowlist: row.ip_allowlist,
    disabled: row.disabled,
    expires_at: isoOrNull(row.expires_at),
    created_at: isoOrNull(row.created_at)!,
  };
}

export async function createKey(
  db: Db,
  input: {
    merchantId: string;
    environment: Environment;
    scopes: string[];
    pendingScopes: string[];
    ipAllowlist: string;
    expiresAt: Date | null;
    rotatedFrom?: string;
  },
  now: Date,
): Promise<KeyWithSecrets> {
  requireAllowlist(input.environment, input.ipAllowlist);
  requireFutureExpiry(input.expiresAt, now);
  const apiKey = `mwk_${randomToken(32)}`;
  const signingKey = `mws_${randomToken(32)}`;
  const row = await insertKey(db, {
    id: newId('key'),
    merchant_id: input.merchantId,
    environment: input.environment,
    client_id: `cli_${randomToken(12)}`,
    api_key_hash: sha256Hex(apiKey),
    signing_key: signingKey,
    scopes: JSON.stringify(input.scopes),
    pending_scopes: JSON.stringify(input.pendingScopes),
    ip_allowlist: input.ipAllowlist,
    expires_at: input.expiresAt,
    rotated_from: input.rotatedFrom ?? null,
    updated_at: now,
  });
  return { ...view(row), api_key: apiKey, signing_key: signingKey };
}

export async function getKey(db: Db, id: string) {
  const row = await findKey(db, id);
  if (!row) throw new ApiError('not_found', 'No such API key.');
  return row;
}

export async function approveScopes(db: Db, id: string, scopes: string[] | undefined, now: Date): Promise<KeyView> {
  const row = await getKey(db, id);
  const approving =
    scopes === undefined ? row.pending_scopes : row.pending_scopes.filter((s: string) => scopes.includes(s));
  const updated = await updateKeyRow(db, id, {
    scopes: JSON.stringify([...new Set([...row.scopes, ...approving])]),
    pending_scopes: JSON.stringify(row.pending_scopes.filter((s: string) => !approving.includes(s))),
    updated_at: now,
  });
  return view(updated);
}

export async function updateKey(
  db: Db,
  id: string,
  patch: { scopes?: string[]; ip_allowlist?: string; disabled?: boolean; expires_at?: string | null },
  now: Date,
): Promise<KeyView> {
  const row = await getKey(db, id);
  const set: Record<string, unknown> = { updated_at: now };
  if (patch.expires_at !== undefined && patch.expires_at !== null) requireFutureExpiry(new Date(patch.expires_at), now);
  if (patch.scopes !== undefined) {
    const { scopes, pending } = splitScopes(row.environment, patch.scopes);
    // Scopes already approved stay granted; newly requested restricted ones wait again.
    const granted = scopes.concat(pending.filter((s) => row.scopes.includes(s)));
    set.scopes = JSON.stringify(granted);
    set.pending_scopes = JSON.stringify(pending.filter((s) => !row.scopes.includes(s)));
  }
  if (patch.ip_allowlist !== undefined) {
    requireAllowlist(row.environment, patch.ip_allowlist);
    set.ip_allowlist = patch.ip_allowlist;
  }
  if (patch.disabled !== undefined) set.disabled = patch.disabled;
  if (patch.expires_at !== undefined) set.expires_at = patch.expires_at === null ? null : new Date(patch.expires_at);
  if (stopsTokens(row, { disabled: patch.disabled, expiresAt: set.expires_at as Date | null | undefined }, now)) {
    set.token_generation = nextTokenGenerationSql();
  }
  const updated = await updateKeyRow(db, id, set);
  return view(updated);
}

/** A new key with the same grants; the old one keeps working until the overlap ends, then stops hard. */
/** In the caller's transaction (the old key is updated and the new one inserted together). */
export async function rotateKey(
  trx: Transaction<Database>,
  id: string,
  overlapSeconds: number,
  at: Date,
): Promise<KeyWithSecrets> {
  const old = await getKey(trx, id);
  if (old.disabled) throw new ApiError('state_invalid', 'A disabled key cannot be rotated.');
  const now = at.getTime();
  const edge = new Date(now + overlapSeconds * 1000);
  const oldExpiry = old.expires_at ? new Date(old.expires_at) : null;
  // Its successor would inherit a passed expiry: a key must not be born dead.
  if (oldExpiry && oldExpiry.getTime() <= now) throw new ApiError('state_invalid', 'An expired key cannot be rotated.');
  await setKeyExpiry(trx, id, oldExpiry && oldExpiry < edge ? oldExpiry : edge, at);
  // A key already rotated carries its overlap's edge as its expiry: its first successor holds the
  // expiry it had before (a second rotation, such as a retry whose answer was lost, must not give
  // a key that dies at that edge).
  const successor = await firstSuccessor(trx, id);
  return createKey(
    trx,
    {
      merchantId: old.merchant_id,
      environment: old.environment,
      scopes: old.scopes,
      pendingScopes: old.pending_scopes,
      ipAllowlist: old.ip_allowlist,
      expiresAt: successor ? (successor.expires_at ? new Date(successor.expires_at) : null) : oldExpiry,
      rotatedFrom: old.id,
    },
    at,
  );
}
