// Over 300 lines: the withdrawal's whole life in one place (create, confirm and fail as batch effects, the reads).
import type { Selectable, Transaction } from 'kysely';
import type { Database, Db } from '../../db/schema.js';
import { ownerColumns } from '../../db/owned-by.js';
import type { ServiceContext } from '../../service-context.js';
import type { WithdrawalStatus, WithdrawalsTable } from './tables.js';
import { ApiError, type ErrorCode } from '../../platform/errors.js';
import { newId, withPrefix } from '../../platform/ids.js';
import {
  entryKinds,
  formatStored,
  minorFromDb,
  lockMerchantWrites,
  postEntries,
  withdrawalConfirmLines,
  withdrawalFailLines,
  withdrawalLockLines,
} from '../../money/index.js';
import { rowEnvelope } from '../../events/index.js';
import { assetScale, getAsset, pageAtScale } from '../assets/index.js';
import { type StepUpCall, stepUpErrors, stepUpInBatch, stepUpNeeded, stepUpObjectRef } from '../step-up/index.js';
import { highValueRefusals } from '../kyc/index.js';
import { transition, type WithdrawalAction } from './state.js';
import { checkWithdrawal, type WithdrawalInput } from './rules.js';
import {
  findOwned,
  insertWithdrawals,
  lockOwnedMany,
  moveLocked,
  refusedAddresses,
  withdrawalPage,
  type LockedWithdrawal,
  type NamedWithdrawal,
} from './queries.js';
import { writeAlone, type WriteMode } from '../../platform/writes/write-batch.js';
import {
  checkEach,
  headOfCall,
  mapAnswers,
  postedOnly,
  type BatchAnswer,
} from '../../platform/writes/batch-answers.js';
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

/** A confirm or fail: the merchant (its caller) and the withdrawal's id as the path gave it. */
export type WithdrawalMovePlan = NamedWithdrawal;

type Moved = { row: Row; replayed: boolean };

/**
 * Moves locked withdrawals on (confirm: settled, fail: failed), many of any merchants in a few
 * statements whatever their number (group commit, docs/write-model.md; a lone one is a list of
 * one): one statement locks the named withdrawals with their members' external ids; the state
 * machine answers each (a repeat of the move that reached its state is a replay, another state is
 * refused); one posts the entries of those that move with their events (a custody shortfall refuses
 * that confirm alone, with nothing of it written); one moves their rows. Concurrent calls post
 * once: the withdrawal's lock makes the later one find the state the first reached. A second plan
 * for a withdrawal already in the call depends on the first's outcome: it is written after it
 * (`writeAlone`).
 */
async function moveWithdrawals(
  trx: Transaction<Database>,
  plans: readonly WithdrawalMovePlan[],
  action: WithdrawalAction,
): Promise<BatchAnswer<Moved>[]> {
  const answers: BatchAnswer<Moved>[] = [];
  const { head, end } = headOfCall(plans, answers, (p) => [withPrefix('wdr', p.id)]);
  const rows = await lockOwnedMany(trx, head);
  const moving: { i: number; row: LockedWithdrawal }[] = [];
  for (const [i, row] of rows.entries()) {
    if (!row) {
      answers[i] = new ApiError('not_found', 'No such withdrawal.');
      continue;
    }
    const t = transition(row.status, action);
    if (t.kind === 'refuse') answers[i] = new ApiError(t.code, `The withdrawal is ${row.status}.`);
    else if (t.kind === 'replay') answers[i] = { row, replayed: true };
    else moving.push({ i, row });
  }
  const target = action === 'confirm' ? 'settled' : 'failed';
  const outcomes = await postEntries(
    trx,
    moving.map(({ row }) => {
      const amount = minorFromDb(row.amount);
      const fee = minorFromDb(row.fee);
      return {
        entry: {
          environment: row.environment,
          merchantId: row.merchant_id,
          kind: action === 'confirm' ? entryKinds.withdrawalConfirm : entryKinds.withdrawalFail,
          referenceType: 'withdrawal',
          referenceId: row.id,
          asset: row.asset,
          lines:
            action === 'confirm'
              ? withdrawalConfirmLines({ memberId: row.member_id, merchantId: row.merchant_id, amount, fee })
              : withdrawalFailLines({ memberId: row.member_id, amount, fee }),
        },
        event: {
          ...rowEnvelope({ ...row, status_version: row.status_version + 1 }),
          type: `withdrawal.${target}` as const,
          object: 'withdrawal',
          status: target,
          externalMemberId: row.external_member_id,
        },
      };
    }),
  );
  const posted = postedOnly(moving, outcomes, answers);
  const moved = await moveLocked(
    trx,
    posted.map(({ item }) => item.row),
    target,
  );
  for (const [k, { item }] of posted.entries()) answers[item.i] = { row: moved[k]!, replayed: false };
  return answers.slice(0, end);
}

const confirmation = (m: Moved) => ({ id: m.row.id, status: 'settled' as const, replayed: m.replayed });

/** The merchant's confirmations that it paid withdrawals out: locked → settled, custody reduced. */
export async function confirmWithdrawals(trx: Transaction<Database>, plans: readonly WithdrawalMovePlan[]) {
  return mapAnswers(await moveWithdrawals(trx, plans, 'confirm'), confirmation);
}

/** The merchant could not pay withdrawals out: locked → failed, withdrawing back to available. */
export async function failWithdrawals(trx: Transaction<Database>, plans: readonly WithdrawalMovePlan[]) {
  return mapAnswers(await moveWithdrawals(trx, plans, 'fail'), async (m) =>
    withdrawalView(m.row, await assetScale(trx, m.row.asset)),
  );
}

/**
 * One move outside a batch (the console): the merchant's write lock first, so that this
 * transaction locks the withdrawal after it as a batch does (docs/locking.md); a refusal is thrown.
 */
async function moveOne<V>(
  trx: Transaction<Database>,
  caller: Caller,
  id: string,
  many: (trx: Transaction<Database>, plans: readonly WithdrawalMovePlan[]) => Promise<BatchAnswer<V>[]>,
): Promise<V> {
  await lockMerchantWrites(trx, caller);
  const [answer] = await many(trx, [{ caller, id }]);
  if (answer instanceof Error) throw answer;
  return answer as V;
}

export const confirmWithdrawal = (trx: Transaction<Database>, caller: Caller, id: string) =>
  moveOne(trx, caller, id, confirmWithdrawals);

export const failWithdrawal = (trx: Transaction<Database>, caller: Caller, id: string) =>
  moveOne(trx, caller, id, failWithdrawals);

export async function listWithdrawals(
  db: Db,
  caller: Caller,
  query: { limit?: number; cursor?: string; status?: WithdrawalStatus },
) {
  return pageAtScale(db, await withdrawalPage(db, caller, { status: query.status }, query), withdrawalView);
}
