import type { Transaction } from 'kysely';
import type { Database, Db } from '../../db/schema.js';
import type { Clock } from '../../platform/clock.js';
import { ApiError, type ErrorCode } from '../../platform/errors.js';
import { newId, withPrefix } from '../../platform/ids.js';
import { mapPage, type PageParams } from '../../platform/routes/pagination.js';
import { keysetPage } from '../../db/keyset-page.js';
import { accountBalance, formatAmount, lockMerchantWrites, parseAmount } from '../../money/index.js';
import { getAsset } from '../assets/index.js';
import { countMonitors, deleteMonitorRow, findMonitor, insertMonitor, monitorsOf } from './queries.js';
import type { MerchantScope } from '../../platform/caller.js';

/**
 * Balance monitors (extensions 13, docs/ledger.md "Balance monitors"): the merchant's watch on
 * its prepaid or custody balance of one asset. This file creates, lists and removes them; their
 * state after creation is the ledger's to keep (the trigger of migration 047, in the transaction
 * of each posting that changes the balance, with its `balance_monitor.*` event).
 */

export const monitorErrors = {
  create: ['asset_not_allowed', 'invalid_request'],
  remove: ['not_found'],
} as const satisfies Record<string, readonly ErrorCode[]>;

/** Monitors a merchant may keep per environment: each is read by the trigger on every change of its balance. */
export const monitorsMax = 50;

export interface MonitorView {
  id: string;
  balance: 'prepaid' | 'custody';
  asset: string;
  below: string;
  state: 'ok' | 'triggered';
}

const idShape = /^[A-Za-z0-9_.:-]{1,100}$/;

function view(row: {
  id: string;
  balance: 'prepaid' | 'custody';
  asset: string;
  below: string | bigint;
  state: 'ok' | 'triggered';
  scale: number;
}): MonitorView {
  return {
    id: row.id,
    balance: row.balance,
    asset: row.asset,
    below: formatAmount(BigInt(row.below), row.scale),
    state: row.state,
  };
}

export async function createMonitor(
  trx: Transaction<Database>,
  clock: Clock,
  scope: MerchantScope,
  body: { balance: 'prepaid' | 'custody'; asset: string; below: string },
): Promise<MonitorView> {
  const asset = await getAsset(trx, body.asset.toUpperCase());
  if (!asset || !asset.enabled) throw new ApiError('asset_not_allowed');
  const below = parseAmount(body.below, asset.scale);
  if (below <= 0n) throw new ApiError('invalid_request', 'below must be greater than zero.');
  // The merchant's write lock (the one every posting of the merchant takes first, migration 031):
  // no posting of the merchant is between its balance change and its commit while the state is
  // read, so the state is the balance's and the next posting's trigger starts from it.
  await lockMerchantWrites(trx, scope);
  if ((await countMonitors(trx, scope)) >= monitorsMax)
    throw new ApiError(
      'invalid_request',
      `A merchant keeps at most ${monitorsMax} balance monitors; delete one first.`,
    );
  const balance = await accountBalance(
    trx,
    scope.environment,
    { owner: 'merchant', merchantId: scope.merchantId, bucket: body.balance },
    asset.code,
  );
  const row = {
    id: newId('bmn'),
    merchant_id: scope.merchantId,
    environment: scope.environment,
    balance: body.balance,
    asset: asset.code,
    below: below.toString(),
    state: balance < below ? ('triggered' as const) : ('ok' as const),
    created_at: await clock.now(trx, scope),
  };
  await insertMonitor(trx, row);
  return view({ ...row, scale: asset.scale });
}

export async function listMonitors(db: Db, scope: MerchantScope, page: PageParams) {
  return mapPage(await keysetPage(monitorsOf(db, scope), page), view);
}

export async function getMonitor(db: Db, scope: MerchantScope, id: string): Promise<MonitorView | undefined> {
  if (!idShape.test(id)) return undefined;
  const row = await findMonitor(db, scope, withPrefix('bmn', id));
  return row ? view(row) : undefined;
}

export async function deleteMonitor(
  trx: Transaction<Database>,
  scope: MerchantScope,
  id: string,
): Promise<{ id: string; deleted: true }> {
  const found = idShape.test(id) ? await deleteMonitorRow(trx, scope, withPrefix('bmn', id)) : undefined;
  if (!found) throw new ApiError('not_found', 'No such balance monitor.');
  return { id: found.id, deleted: true };
}
