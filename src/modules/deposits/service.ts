import type { Selectable, Transaction } from 'kysely';
import type { Database, Environment, Db } from '../../db/schema.js';
import type { DepositsTable } from './tables.js';
import { ApiError, type ErrorCode } from '../../platform/errors.js';
import { newId, withPrefix } from '../../platform/ids.js';
import { constantList } from '../../platform/routes/pagination.js';
import {
  depositLines,
  entryKinds,
  formatStored,
  parseAmount,
  postEntries,
  type EntryWithEvent,
} from '../../money/index.js';
import { assetScale, getAsset, pageAtScale, type Asset } from '../assets/index.js';
import { resolveMember } from '../members/index.js';
import { depositPage, findDeposit, insertDeposits, type NewDeposit } from './queries.js';
import { checkEach } from '../../platform/writes/batch-answers.js';
import type { Caller } from '../../platform/caller.js';

/** The codes each function can answer (beyond invalid input): the routes declare these lists. */
export const depositErrors = {
  create: ['member_not_found', 'asset_not_allowed', 'duplicate_resource'],
  get: ['not_found'],
} as const satisfies Record<string, readonly ErrorCode[]>;

export interface DepositInput {
  member_id: string;
  asset: string;
  amount: string;
  tx_hash: string;
  network?: string;
}

type DepositFields = Pick<
  Selectable<DepositsTable>,
  'id' | 'member_id' | 'asset' | 'network' | 'amount' | 'tx_hash' | 'status' | 'created_at'
>;

export function depositView(d: DepositFields, asset: Pick<Asset, 'scale'>) {
  return {
    id: d.id,
    member_id: d.member_id,
    asset: d.asset,
    network: d.network,
    amount: formatStored(d.amount, asset.scale),
    tx_hash: d.tx_hash,
    status: d.status as 'credited',
    created_at: new Date(d.created_at).toISOString(),
  };
}

/** What a deposit's own fields decide before any row is read: the asset, its network, the amount. */
async function checkDeposit(trx: Db, input: DepositInput) {
  const asset = await getAsset(trx, input.asset.toUpperCase());
  if (!asset || !asset.enabled) throw new ApiError('asset_not_allowed');
  const network = input.network?.toUpperCase();
  if (network !== undefined && !asset.networks.some((n) => n.network === network && n.enabled)) {
    throw new ApiError('asset_not_allowed', 'The asset has no enabled channel on this network.');
  }
  const amount = parseAmount(input.amount, asset.scale);
  if (amount <= 0n) throw new ApiError('invalid_request', 'amount must be greater than zero.');
  return { asset, network, amount };
}

const duplicateMessage = 'A deposit with this tx_hash and asset was already reported.';

/** A deposit to write: the merchant reporting it and the request's body. */
export interface DepositPlan {
  merchantId: string;
  environment: Environment;
  input: DepositInput;
}

/**
 * The merchant reports money received for members: for each deposit the row, the ledger entry
 * (member available and merchant custody both grow) and the `deposit.credited` event, written
 * together. Many deposits, of any merchants, in two statements whatever their number (group
 * commit, docs/write-model.md; a lone deposit is a list of one): each deposit's own fields are
 * checked first (asset, network, amount: the catalogue is held in memory), then one statement
 * resolves the members and inserts the rows (`insertDeposits`), and one posts the entries with
 * their events (`postEntries`). One answer per deposit, in order: its view, or its refusal, with
 * nothing of it written. A posting refused here cannot happen (a deposit only adds, under a new
 * reference): it throws, and the batch's writes run again one by one.
 */
export async function createDeposits(
  trx: Transaction<Database>,
  plans: readonly DepositPlan[],
): Promise<(ReturnType<typeof depositView> | Error)[]> {
  const answers: (ReturnType<typeof depositView> | Error)[] = new Array(plans.length);
  const checked = await checkEach(plans, answers, async ({ merchantId, environment, input }) => {
    const { asset, network, amount } = await checkDeposit(trx, input);
    const deposit: NewDeposit = {
      id: newId('dep'),
      merchantId,
      environment,
      memberRef: input.member_id,
      asset: asset.code,
      network: network ?? null,
      amount: amount.toString(),
      txHash: input.tx_hash,
    };
    return { asset, amount, deposit };
  });
  if (checked.length === 0) return answers;
  const inserted = await insertDeposits(
    trx,
    checked.map((c) => c.deposit),
  );
  const posted: { i: number; row: Selectable<DepositsTable>; asset: Asset }[] = [];
  const postings: EntryWithEvent[] = [];
  for (const [j, c] of checked.entries()) {
    const done = inserted[j]!;
    if ('refused' in done) {
      answers[c.i] =
        done.refused === 'member_not_found'
          ? new ApiError('member_not_found')
          : new ApiError('duplicate_resource', duplicateMessage);
      continue;
    }
    const { row } = done;
    const { merchantId, environment } = c.deposit;
    posted.push({ i: c.i, row, asset: c.asset });
    postings.push({
      entry: {
        environment,
        merchantId,
        kind: entryKinds.deposit,
        referenceType: 'deposit',
        referenceId: row.id,
        asset: row.asset,
        lines: depositLines({ memberId: row.member_id, merchantId, amount: c.amount }),
      },
      event: {
        merchantId,
        environment,
        type: 'deposit.credited',
        object: 'deposit',
        objectId: row.id,
        externalMemberId: done.externalMemberId,
        status: 'credited',
        statusVersion: 1,
      },
    });
  }
  const outcomes = await postEntries(trx, postings);
  for (const [k, p] of posted.entries()) {
    const outcome = outcomes[k]!;
    if (outcome instanceof Error)
      throw new Error(`deposits: the posting of ${p.row.id} was refused in a batch`, { cause: outcome });
    answers[p.i] = depositView(p.row, p.asset);
  }
  return answers;
}

/** Ids that can name a row: anything else (control characters, other alphabets) finds nothing. */
const idShape = /^[A-Za-z0-9_.:-]{1,100}$/;

/** One of the merchant's deposits in the caller's environment (on behalf of a member: only its own). */
export async function getDeposit(db: Db, caller: Caller, id: string) {
  if (!idShape.test(id)) throw new ApiError('not_found', 'No such deposit.');
  const row = await findDeposit(db, caller, withPrefix('dep', id));
  if (!row) throw new ApiError('not_found', 'No such deposit.');
  return depositView(row, { scale: await assetScale(db, row.asset) });
}

export interface DepositFilters {
  limit?: number;
  cursor?: string;
  /** `mem_<uuid>` or the external member id; an unknown member gives an empty page. */
  member_id?: string;
  asset?: string;
  /** ISO 8601: created at or after. */
  created_gte?: string;
  /** ISO 8601: created strictly before. */
  created_lt?: string;
}

/** Newest first, keyset on `seq`; the filters narrow the walk and never shift its pages. */
export async function listDeposits(db: Db, caller: Caller, query: DepositFilters) {
  let memberId = caller.memberId;
  if (query.member_id !== undefined) {
    const member = idShape.test(query.member_id)
      ? await resolveMember(db, caller.merchantId, caller.environment, query.member_id)
      : undefined;
    if (!member || (memberId !== undefined && member.id !== memberId)) return constantList([]);
    memberId = member.id;
  }
  const page = await depositPage(
    db,
    caller,
    {
      memberId,
      asset: query.asset?.toUpperCase(),
      createdGte: query.created_gte,
      createdLt: query.created_lt,
    },
    query,
  );
  return pageAtScale(db, page, (r, scale) => depositView(r, { scale }));
}
