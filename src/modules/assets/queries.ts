import type { Transaction } from 'kysely';
import type { Database, Db } from '../../db/schema.js';
import { ApiError } from '../../platform/errors.js';
import { mapPage, type ListEnvelope } from '../../platform/routes/pagination.js';
import { minorFromDb } from '../../money/index.js';
import { sqlState } from '../../money/index.js';
import type { AssetType } from '../../money/index.js';
import type { Asset, AssetNetwork } from './rules.js';
import { assetCacheOf } from './catalogue-cache.js';

interface NetworkRow {
  asset: string;
  network: string;
  enabled: boolean;
  withdrawal_fee: string;
  withdrawal_min: string;
  address_pattern: string;
}

const networkColumns = ['asset', 'network', 'enabled', 'withdrawal_fee', 'withdrawal_min', 'address_pattern'] as const;

function toNetwork(row: NetworkRow): AssetNetwork {
  return {
    network: row.network,
    enabled: row.enabled,
    withdrawalFee: minorFromDb(row.withdrawal_fee),
    withdrawalMin: minorFromDb(row.withdrawal_min),
    addressPattern: row.address_pattern,
  };
}

/**
 * One asset with all its networks (by name), or undefined. The withdrawal module reads fees here.
 * Answered from the service's catalogue cache when it holds the asset (catalogue-cache.ts): a
 * copy, so a caller cannot change what the next one reads.
 */
export async function getAsset(db: Db, code: string): Promise<Asset | undefined> {
  const cache = assetCacheOf(db);
  const held = cache?.get(code);
  if (held) return { ...held, networks: held.networks.map((n) => ({ ...n })) };
  const generation = cache?.begin() ?? 0;
  const asset = await readAsset(db, code);
  if (asset && cache) cache.put(code, { ...asset, networks: asset.networks.map((n) => ({ ...n })) }, generation);
  return asset;
}

/**
 * An asset's scale, from the catalogue. Assets are never deleted, so a code missing from it is a bug
 * of the caller (a row naming an asset that was never listed): thrown, never guessed.
 */
export async function assetScale(db: Db, code: string): Promise<number> {
  const asset = await getAsset(db, code);
  if (!asset) throw new Error(`asset ${code} missing from the catalogue`);
  return asset.scale;
}

/** The asset as the database has it now (in the caller's transaction: its own changes included). */
async function readAsset(db: Db, code: string): Promise<Asset | undefined> {
  const asset = await db
    .selectFrom('assets')
    .select(['code', 'scale', 'type', 'enabled'])
    .where('code', '=', code)
    .executeTakeFirst();
  if (!asset) return undefined;
  const networks = await db
    .selectFrom('asset_networks')
    .select(networkColumns)
    .where('asset', '=', code)
    .orderBy('network')
    .execute();
  return { ...asset, networks: networks.map(toNetwork) };
}

/** The catalogue by code; `enabledOnly` leaves out disabled assets (their networks stay listed). */
export async function listAssets(db: Db, options: { enabledOnly: boolean }): Promise<Asset[]> {
  let query = db.selectFrom('assets').select(['code', 'scale', 'type', 'enabled']).orderBy('code');
  if (options.enabledOnly) query = query.where('enabled', '=', true);
  const assets = await query.execute();
  const networks = await db
    .selectFrom('asset_networks')
    .select(networkColumns)
    .orderBy('asset')
    .orderBy('network')
    .execute();
  const byAsset = new Map<string, AssetNetwork[]>();
  for (const row of networks) byAsset.set(row.asset, [...(byAsset.get(row.asset) ?? []), toNetwork(row)]);
  return assets.map((a) => ({ ...a, networks: byAsset.get(a.code) ?? [] }));
}

/**
 * A page of rows that each carry an asset, every row viewed at its asset's scale (one catalogue
 * read per page). An asset missing from the catalogue is a programmer error.
 */
export async function pageAtScale<R extends { asset: string }, T>(
  db: Db,
  page: ListEnvelope<R>,
  view: (row: R, scale: number) => T,
): Promise<ListEnvelope<T>> {
  const codes = [...new Set(page.data.map((r) => r.asset))];
  const found =
    codes.length === 0
      ? []
      : await db.selectFrom('assets').select(['code', 'scale']).where('code', 'in', codes).execute();
  const scales = new Map(found.map((a) => [a.code, a.scale]));
  return mapPage(page, (row) => {
    const scale = scales.get(row.asset);
    if (scale === undefined) throw new Error(`asset ${row.asset} missing from the catalogue`);
    return view(row, scale);
  });
}

async function mustGet(db: Db, code: string): Promise<Asset> {
  const asset = await readAsset(db, code);
  if (!asset) throw new ApiError('not_found', 'No such asset.');
  return asset;
}

export async function createAsset(db: Db, input: { code: string; scale: number; type: AssetType }): Promise<Asset> {
  assetCacheOf(db)?.ownWrite();
  const inserted = await db
    .insertInto('assets')
    .values({ code: input.code, scale: input.scale, type: input.type })
    .onConflict((oc) => oc.column('code').doNothing())
    .returning('code')
    .executeTakeFirst();
  if (!inserted) throw new ApiError('duplicate_resource', `Asset ${input.code} already exists.`);
  return mustGet(db, input.code);
}

export async function setAssetEnabled(db: Db, code: string, enabled: boolean): Promise<Asset> {
  assetCacheOf(db)?.ownWrite();
  const row = await db
    .updateTable('assets')
    .set({ enabled })
    .where('code', '=', code)
    .returning('code')
    .executeTakeFirst();
  if (!row) throw new ApiError('not_found', 'No such asset.');
  return mustGet(db, code);
}

export interface NetworkInput {
  enabled: boolean;
  withdrawalFee: bigint;
  withdrawalMin: bigint;
  addressPattern: string;
}

/** Creates or replaces one network of a crypto asset, in the caller's transaction (the asset row is locked). */
export async function putAssetNetwork(
  trx: Transaction<Database>,
  code: string,
  network: string,
  input: NetworkInput,
  now: Date,
): Promise<Asset> {
  assetCacheOf(trx)?.ownWrite();
  const asset = await trx
    .selectFrom('assets')
    .select(['code', 'type'])
    .where('code', '=', code)
    .forNoKeyUpdate()
    .executeTakeFirst();
  if (!asset) throw new ApiError('not_found', 'No such asset.');
  if (asset.type !== 'crypto') throw new ApiError('invalid_request', 'Networks apply to crypto assets only.');
  const values = {
    enabled: input.enabled,
    withdrawal_fee: input.withdrawalFee.toString(),
    withdrawal_min: input.withdrawalMin.toString(),
    address_pattern: input.addressPattern,
    updated_at: now,
  };
  try {
    await trx
      .insertInto('asset_networks')
      .values({ asset: code, network, ...values })
      .onConflict((oc) => oc.columns(['asset', 'network']).doUpdateSet(values))
      .execute();
  } catch (err) {
    if (sqlState(err) === '23514' || sqlState(err) === '22003')
      throw new ApiError('invalid_request', 'The network values are out of range.');
    throw err;
  }
  return mustGet(trx, code);
}
