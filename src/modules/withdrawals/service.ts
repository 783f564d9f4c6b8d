import type { Selectable, Transaction } from 'kysely';
import type { Database, Db } from '../../db/schema.js';
import { ownerColumns } from '../../db/owned-by.js';
import type { ServiceContext } from '../../service-context.js';
import type { WithdrawalStatus, WithdrawalsTable } from './tables.js';
import { ApiError, type ErrorCode } from '../../platform/errors.js';
import { newId } from '../../platform/ids.js';
import {
  entryKinds,
  formatAmount,
  minorFromDb,
  parseAmount,
  postEntryOrRefuse,
  withdrawalConfirmLines,
  withdrawalFailLines,
  withdrawalLockLines,
} from '../../money/index.js';
import { recordEvent, rowEnvelope } from '../../events/index.js';
import { addressMatches, assetScale, getAsset, pageAtScale, usableNetwork } from '../assets/index.js';
import { requireStepUp, type StepUpCall, stepUpErrors, stepUpObjectRef } from '../step-up/index.js';
import { requireHighValueLevel } from '../kyc/index.js';
import { transition, type WithdrawalAction } from './state.js';
import { addressChecksumValid } from './address-rules.js';
import { addressRefused, claimMove, findOwned, insertWithdrawal, memberExternalId, withdrawalPage } from './queries.js';
import type { Caller } from '../../platform/caller.js';

/** The codes each function can answer (beyond invalid input): the routes declare these lists. */
export const withdrawalErrors = {
  // kyc_required: the high-value gate (requireHighValueLevel), at or above the operator's threshold for the asset.
  create: [
    'asset_not_allowed',
    'address_not_allowed',
    'insufficient_balance',
    'amount_out_of_range',
    'kyc_required',
    ...stepUpErrors,
  ],
  confirm: ['order_not_cancellable', 'merchant_custody_shortfall', 'not_found'],
  fail: ['order_not_cancellable', 'not_found'],
  get: ['not_found'],
} as const satisfies Record<string, readonly ErrorCode[]>;

type Row = Selectable<WithdrawalsTable>;

export function withdrawalView(w: Row, scale: number, externalMemberId?: string) {
  return {
    id: w.id,
    status: w.status,
    status_version: w.status_version,
    member_id: w.member_id,
    ...(externalMemberId !== undefined ? { external_member_id: externalMemberId } : {}),
    asset: w.asset,
    network: w.network,
    address: w.address,
    amount: formatAmount(minorFromDb(w.amount), scale),
    fee: formatAmount(minorFromDb(w.fee), scale),
    created_at: new Date(w.created_at).toISOString(),
    updated_at: new Date(w.updated_at).toISOString(),
  };
}

/** Malformed (shape or checksum), wrong chain, blacklisted, or one of the service's own deposit addresses. */
async function checkAddress(
  db: Db,
  network: { network: string; addressPattern: string },
  address: string,
): Promise<void> {
  if (!addressMatches(network, address) || !addressChecksumValid(network.network, address))
    throw new ApiError('address_not_allowed');
  if (await addressRefused(db, network.network, address)) throw new ApiError('address_not_allowed');
}

export interface WithdrawalInput {
  asset: string;
  network: string;
  address: string;
  amount: string;
}

/**
 * Amount plus the catalogue's fee move from available to withdrawing; the merchant pays out on
 * chain. At or above the operator's step-up threshold for the asset (none by default) the member
 * must pass strong authentication for this very request (asset, network, address, amount) first.
 */
export async function createWithdrawal(
  ctx: ServiceContext,
  trx: Transaction<Database>,
  caller: Caller & { memberId: string; externalMemberId: string },
  input: WithdrawalInput,
  stepUp: StepUpCall,
) {
  const asset = await getAsset(trx, input.asset.toUpperCase());
  const network = usableNetwork(asset, input.network.toUpperCase());
  if (!asset || !network) throw new ApiError('asset_not_allowed');
  const amount = parseAmount(input.amount, asset.scale);
  if (amount <= 0n) throw new ApiError('invalid_request', 'amount must be greater than zero.');
  if (amount < network.withdrawalMin)
    throw new ApiError(
      'amount_out_of_range',
      `The minimum withdrawal is ${formatAmount(network.withdrawalMin, asset.scale)} ${asset.code}.`,
    );
  await checkAddress(trx, network, input.address);
  await requireHighValueLevel(trx, {
    environment: caller.environment,
    memberId: caller.memberId,
    asset: asset.code,
    amount,
  });
  await requireStepUp(ctx, trx, {
    principal: caller,
    action: 'withdrawal.create',
    objectRef: stepUpObjectRef('withdrawal.create', {
      asset: asset.code,
      network: network.network,
      address: input.address,
      amount,
    }),
    call: stepUp,
    above: { asset: asset.code, amount },
  });

  const row = await insertWithdrawal(trx, {
    id: newId('wdr'),
    ...ownerColumns(caller),
    asset: asset.code,
    network: network.network,
    address: input.address,
    amount: amount.toString(),
    fee: network.withdrawalFee.toString(),
    status: 'locked',
    status_version: 1,
  });
  await postEntryOrRefuse(trx, {
    environment: caller.environment,
    merchantId: caller.merchantId,
    kind: entryKinds.withdrawalLock,
    referenceType: 'withdrawal',
    referenceId: row.id,
    asset: asset.code,
    lines: withdrawalLockLines({ memberId: caller.memberId, amount, fee: network.withdrawalFee }),
  });
  await recordEvent(trx, {
    ...rowEnvelope(row),
    type: 'withdrawal.locked',
    object: 'withdrawal',
    status: 'locked',
    externalMemberId: caller.externalMemberId,
  });
  return withdrawalView(row, asset.scale);
}

export async function getWithdrawal(db: Db, caller: Caller, id: string) {
  const row = await findOwned(db, caller, id);
  if (!row) throw new ApiError('not_found', 'No such withdrawal.');
  return withdrawalView(row, await assetScale(db, row.asset));
}

/**
 * Moves a locked withdrawal on. The claim is one conditional UPDATE: of concurrent calls exactly
 * one sees `locked` and posts; the others find the state it reached and get a replay.
 */
async function advance(trx: Transaction<Database>, caller: Caller, id: string, action: WithdrawalAction) {
  const existing = await findOwned(trx, caller, id);
  if (!existing) throw new ApiError('not_found', 'No such withdrawal.');
  const target = action === 'confirm' ? 'settled' : 'failed';
  const claimed = await claimMove(trx, caller, existing.id, target);
  if (!claimed) {
    const now = (await findOwned(trx, caller, id))!;
    const t = transition(now.status, action);
    if (t.kind === 'refuse') throw new ApiError(t.code, `The withdrawal is ${now.status}.`);
    return { row: now, replayed: true };
  }
  const amount = minorFromDb(claimed.amount);
  const fee = minorFromDb(claimed.fee);
  const lines =
    action === 'confirm'
      ? withdrawalConfirmLines({ memberId: claimed.member_id, merchantId: claimed.merchant_id, amount, fee })
      : withdrawalFailLines({ memberId: claimed.member_id, amount, fee });
  await postEntryOrRefuse(trx, {
    environment: caller.environment,
    merchantId: caller.merchantId,
    kind: action === 'confirm' ? entryKinds.withdrawalConfirm : entryKinds.withdrawalFail,
    referenceType: 'withdrawal',
    referenceId: claimed.id,
    asset: claimed.asset,
    lines,
  });
  const member = await memberExternalId(trx, claimed.member_id);
  await recordEvent(trx, {
    ...rowEnvelope(claimed),
    type: `withdrawal.${target}`,
    object: 'withdrawal',
    status: target,
    externalMemberId: member.external_member_id,
  });
  return { row: claimed, replayed: false };
}

export async function confirmWithdrawal(trx: Transaction<Database>, caller: Caller, id: string) {
  const { row, replayed } = await advance(trx, caller, id, 'confirm');
  return { id: row.id, status: 'settled' as const, replayed };
}

export async function failWithdrawal(trx: Transaction<Database>, caller: Caller, id: string) {
  const { row } = await advance(trx, caller, id, 'fail');
  return withdrawalView(row, await assetScale(trx, row.asset));
}

export async function listWithdrawals(
  db: Db,
  caller: Caller,
  query: { limit?: number; cursor?: string; status?: WithdrawalStatus },
) {
  return pageAtScale(db, await withdrawalPage(db, caller, { status: query.status }, query), withdrawalView);
}
