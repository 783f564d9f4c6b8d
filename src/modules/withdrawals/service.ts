import type { Selectable, Transaction } from 'kysely';
import type { Database, Db } from '../../db/schema.js';
import { ownerColumns } from '../../db/owned-by.js';
import type { ServiceContext } from '../../service-context.js';
import type { WithdrawalStatus, WithdrawalsTable } from './tables.js';
import { ApiError, type ErrorCode } from '../../platform/errors.js';
import { newId } from '../../platform/ids.js';
import {
  entryKinds,
  formatStored,
  minorFromDb,
  postEntries,
  postEntryOrRefuse,
  withdrawalConfirmLines,
  withdrawalFailLines,
  withdrawalLockLines,
} from '../../money/index.js';
import { recordEvent, rowEnvelope } from '../../events/index.js';
import { assetScale, getAsset, pageAtScale } from '../assets/index.js';
import { type StepUpCall, stepUpErrors, stepUpInBatch, stepUpNeeded, stepUpObjectRef } from '../step-up/index.js';
import { highValueRefusals } from '../kyc/index.js';
import { transition, type WithdrawalAction } from './state.js';
import { checkWithdrawal, type WithdrawalInput } from './rules.js';
import {
  claimMove,
  findOwned,
  insertWithdrawals,
  memberExternalId,
  refusedAddresses,
  withdrawalPage,
} from './queries.js';
import { writeAlone, type WriteMode } from '../../platform/writes/write-batch.js';
import { checkEach, postedOnly, type BatchAnswer } from '../../platform/writes/batch-answers.js';
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
    amount: formatStored(w.amount, scale),
    fee: formatStored(w.fee, scale),
    created_at: new Date(w.created_at).toISOString(),
    updated_at: new Date(w.updated_at).toISOString(),
  };
}

/** A withdrawal to write: the member it is for (on whose behalf the call is made), the body, the step-up header. */
export interface WithdrawalPlan {
  caller: Caller & { memberId: string; externalMemberId: string };
  body: WithdrawalInput;
  stepUp: StepUpCall;
}

type WithdrawalView = ReturnType<typeof withdrawalView>;

/**
 * Amount plus the catalogue's fee move from available to withdrawing; the merchant pays out on
 * chain. At or above the operator's step-up threshold for the asset (none by default) the member
 * must pass strong authentication for this very request (asset, network, address, amount) first.
 *
 * Many withdrawals, of any merchants, in a handful of statements whatever their number (group
 * commit, docs/write-model.md; a lone one is a list of one): each one's own fields are checked
 * first (the catalogue is held in memory), then one statement each reads the refused addresses,
 * the high-value thresholds and the step-up thresholds of them all; one posts the entries with
 * their events (`postEntries`: a shortfall refuses that withdrawal alone, later ones see the
 * balances earlier ones left) and one inserts the rows of those that posted. One answer per
 * withdrawal, in order: its view or its refusal, with nothing of it written. A withdrawal that
 * needs step-up consumes its challenge before its posting may still be refused, so it is written
 * alone behind a savepoint (`writeAlone`; with `mode.alone` it is that write).
 */
export async function createWithdrawals(
  ctx: ServiceContext,
  trx: Transaction<Database>,
  plans: readonly WithdrawalPlan[],
  mode: WriteMode,
): Promise<BatchAnswer<WithdrawalView>[]> {
  const answers: BatchAnswer<WithdrawalView>[] = [];
  const checked = await checkEach(plans, answers, async (plan) => ({
    plan,
    ...checkWithdrawal(plan.body, await getAsset(trx, plan.body.asset.toUpperCase())),
  }));
  const refused = await refusedAddresses(
    trx,
    checked.map((c) => ({ network: c.network.network, address: c.plan.body.address })),
  );
  const transfers = checked.map(({ plan: { caller }, asset, amount }) => ({
    environment: caller.environment,
    merchantId: caller.merchantId,
    memberId: caller.memberId,
    asset: asset.code,
    amount,
  }));
  const kycRefused = await highValueRefusals(trx, transfers);
  const stepUpDue = await stepUpNeeded(
    trx,
    transfers.map((t) => ({ ...t, action: 'withdrawal.create' as const })),
  );

  // In order: an item's refusals, then its step-up; the first that must be written alone ends this call.
  const accepted: (typeof checked)[number][] = [];
  let end = plans.length;
  for (const [j, c] of checked.entries()) {
    if (c.i >= end) break;
    if (refused.has(j)) answers[c.i] = new ApiError('address_not_allowed');
    else if (kycRefused[j]) answers[c.i] = new ApiError('kyc_required');
    else if (!stepUpDue[j]) accepted.push(c);
    else {
      const gate = await stepUpInBatch(ctx, trx, mode, {
        principal: c.plan.caller,
        action: 'withdrawal.create',
        objectRef: stepUpObjectRef('withdrawal.create', {
          asset: c.asset.code,
          network: c.network.network,
          address: c.plan.body.address,
          amount: c.amount,
        }),
        call: c.plan.stepUp,
      });
      if (gate === 'passed') accepted.push(c);
      else answers[c.i] = gate;
      if (gate === writeAlone) end = c.i + 1;
    }
  }

  const withdrawals = accepted.map(({ plan: { caller, body }, asset, network, amount }) => ({
    id: newId('wdr'),
    ...ownerColumns(caller),
    asset: asset.code,
    network: network.network,
    address: body.address,
    amount: amount.toString(),
    fee: network.withdrawalFee.toString(),
    status: 'locked' as const,
    status_version: 1,
  }));
  const outcomes = await postEntries(
    trx,
    accepted.map(({ plan: { caller }, network, amount }, k) => ({
      entry: {
        environment: caller.environment,
        merchantId: caller.merchantId,
        kind: entryKinds.withdrawalLock,
        referenceType: 'withdrawal',
        referenceId: withdrawals[k]!.id,
        asset: withdrawals[k]!.asset,
        lines: withdrawalLockLines({ memberId: caller.memberId, amount, fee: network.withdrawalFee }),
      },
      event: {
        merchantId: caller.merchantId,
        environment: caller.environment,
        type: 'withdrawal.locked',
        object: 'withdrawal',
        objectId: withdrawals[k]!.id,
        externalMemberId: caller.externalMemberId,
        status: 'locked',
        statusVersion: 1,
      },
    })),
  );
  const posted = postedOnly(accepted, outcomes, answers).map(({ item, k }) => ({ c: item, values: withdrawals[k]! }));
  const rows = await insertWithdrawals(
    trx,
    posted.map((p) => p.values),
  );
  for (const [k, { c }] of posted.entries()) answers[c.i] = withdrawalView(rows[k]!, c.asset.scale);
  return answers.slice(0, end);
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
