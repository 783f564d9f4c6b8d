import type { Selectable, Transaction } from 'kysely';
import type { Database, Environment } from '../../db/schema.js';
import type { DepositsTable } from '../tables.js';
import { ApiError } from '../../platform/errors.js';
import { newId } from '../../platform/ids.js';
import { depositLines, entryKinds, formatAmount, minorFromDb, parseAmount, postEntry, recordEvent } from '../../ledger/index.js';
import { getAsset } from '../assets/queries.js';
import { resolveMember } from '../members/queries.js';
import type { Asset } from '../assets/catalogue.js';

export interface DepositInput {
  member_id: string;
  asset: string;
  amount: string;
  tx_hash: string;
  network?: string;
}

export function depositView(d: Selectable<DepositsTable>, asset: Pick<Asset, 'scale'>) {
  return {
    id: d.id,
    member_id: d.member_id,
    asset: d.asset,
    network: d.network,
    amount: formatAmount(minorFromDb(d.amount), asset.scale),
    tx_hash: d.tx_hash,
    status: d.status,
    created_at: new Date(d.created_at).toISOString(),
  };
}

/**
 * The merchant reports money received for a member: the deposit row, the ledger entry (member
 * available and merchant custody both grow) and the event commit together.
 */
export async function createDeposit(trx: Transaction<Database>, merchantId: string, environment: Environment, input: DepositInput) {
  const asset = await getAsset(trx, input.asset.toUpperCase());
  if (!asset || !asset.enabled) throw new ApiError('asset_not_allowed');
  const network = input.network?.toUpperCase();
  if (network !== undefined && !asset.networks.some((n) => n.network === network && n.enabled)) {
    throw new ApiError('asset_not_allowed', 'The asset has no enabled channel on this network.');
  }
  const amount = parseAmount(input.amount, asset.scale);
  if (amount <= 0n) throw new ApiError('invalid_request', 'amount must be greater than zero.');
  const member = await resolveMember(trx, merchantId, environment, input.member_id);
  if (!member || member.status !== 'active') throw new ApiError('member_not_found');

  const row = await trx
    .insertInto('deposits')
    .values({
      id: newId('dep'),
      merchant_id: merchantId,
      environment,
      member_id: member.id,
      asset: asset.code,
      network: network ?? null,
      amount: amount.toString(),
      tx_hash: input.tx_hash,
      status: 'credited',
    })
    .onConflict((oc) => oc.columns(['merchant_id', 'environment', 'asset', 'tx_hash']).doNothing())
    .returningAll()
    .executeTakeFirst();
  if (!row) throw new ApiError('duplicate_resource', 'A deposit with this tx_hash and asset was already reported.');

  await postEntry(trx, {
    environment,
    merchantId,
    kind: entryKinds.deposit,
    referenceType: 'deposit',
    referenceId: row.id,
    asset: asset.code,
    lines: depositLines({ memberId: member.id, merchantId, amount }),
  });
  await recordEvent(trx, {
    merchantId,
    environment,
    type: 'deposit.credited',
    object: 'deposit',
    objectId: row.id,
    externalMemberId: member.external_member_id,
    status: 'credited',
    statusVersion: 1,
  });
  return depositView(row, asset);
}
