import type { Kysely, Selectable, Transaction } from 'kysely';
import type { Database, Environment } from '../../db/schema.js';
import type { DepositsTable } from './tables.js';
import { ApiError, errorStatus, type ErrorCode } from '../../platform/errors.js';
import { newId, withPrefix } from '../../platform/ids.js';
import { constantList, keysetPage } from '../../platform/pagination.js';
import {
  depositLines, entryKinds, eventRow, formatAmount, linesForStatement, minorFromDb, parseAmount, postEntries, postEntry, recordEvent, type EntryWithEvent, type StatementLine,
} from '../../ledger/index.js';
import { scopeNowSql } from '../../platform/clock.js';
import type { BatchStatement, StatementClaims, StatementRow, StatementWrite } from '../../platform/batch-statement.js';
import { getAsset, pageAtScale } from '../assets/queries.js';
import { resolveMember } from '../members/queries.js';
import { depositBatch, depositPage, findDeposit, insertDeposit, insertDeposits, type Caller, type DepositBatchArgs, type NewDeposit } from './queries.js';
import type { Asset } from '../assets/rules.js';

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

type DepositFields = Pick<Selectable<DepositsTable>, 'id' | 'member_id' | 'asset' | 'network' | 'amount' | 'tx_hash' | 'status' | 'created_at'>;

export function depositView(d: DepositFields, asset: Pick<Asset, 'scale'>) {
  return {
    id: d.id,
    member_id: d.member_id,
    asset: d.asset,
    network: d.network,
    amount: formatAmount(minorFromDb(d.amount), asset.scale),
    tx_hash: d.tx_hash,
    status: d.status as 'credited',
    created_at: new Date(d.created_at).toISOString(),
  };
}

type Db = Kysely<Database> | Transaction<Database>;

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

/**
 * The merchant reports money received for a member: the deposit row, the ledger entry (member
 * available and merchant custody both grow) and the event commit together.
 */
export async function createDeposit(trx: Transaction<Database>, merchantId: string, environment: Environment, input: DepositInput) {
  const { asset, network, amount } = await checkDeposit(trx, input);
  const member = await resolveMember(trx, merchantId, environment, input.member_id);
  if (!member || member.status !== 'active') throw new ApiError('member_not_found');

  const row = await insertDeposit(trx, {
    id: newId('dep'),
    merchant_id: merchantId,
    environment,
    member_id: member.id,
    asset: asset.code,
    network: network ?? null,
    amount: amount.toString(),
    tx_hash: input.tx_hash,
    status: 'credited',
  });
  if (!row) throw new ApiError('duplicate_resource', duplicateMessage);

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
  // Posted last: the merchant's custody row, which every deposit of the merchant locks, is held
  // from here to the commit only.
  await postEntry(trx, {
    environment,
    merchantId,
    kind: entryKinds.deposit,
    referenceType: 'deposit',
    referenceId: row.id,
    asset: asset.code,
    lines: depositLines({ memberId: member.id, merchantId, amount }),
  });
  return depositView(row, asset);
}

/** One deposit of `createDeposits`: the merchant reporting it and the request's body. */
export interface DepositItem {
  merchantId: string;
  environment: Environment;
  input: DepositInput;
}

/**
 * `createDeposit` for a group commit's batch (docs/group-commit.md), in two statements whatever
 * the number of deposits: each deposit's own fields are checked first (asset, network, amount:
 * the catalogue is held in memory), then one statement resolves the members and inserts the
 * rows (`insertDeposits`), and one posts the entries with their events (`postEntries`). One
 * answer per deposit, in order: its view, or its refusal, with nothing of it written; the
 * refusals and their order are those of `createDeposit`. A posting refused here cannot happen
 * (a deposit only adds, under a new reference): it would throw, and the batch's writes run one
 * by one instead.
 */
export async function createDeposits(trx: Transaction<Database>, items: readonly DepositItem[]): Promise<(ReturnType<typeof depositView> | Error)[]> {
  const answers: (ReturnType<typeof depositView> | Error)[] = items.map(() => new Error('deposits: not answered'));
  const checked: { i: number; asset: Asset; deposit: NewDeposit; amount: bigint }[] = [];
  for (const [i, { input }] of items.entries()) {
    try {
      const { asset, network, amount } = await checkDeposit(trx, input);
      checked.push({ i, asset, amount, deposit: { id: newId('dep'), memberRef: input.member_id, asset: asset.code, network: network ?? null, amount: amount.toString(), txHash: input.tx_hash } });
    } catch (err) {
      answers[i] = err as Error;
    }
  }
  if (checked.length === 0) return answers;
  const { merchantId, environment } = items[0]!;
  if (items.some((x) => x.merchantId !== merchantId || x.environment !== environment)) throw new Error('deposits: a batch holds one merchant');
  const inserted = await insertDeposits(trx, merchantId, environment, checked.map((c) => c.deposit));
  const posted: { i: number; row: Selectable<DepositsTable>; asset: Asset }[] = [];
  const postings: EntryWithEvent[] = [];
  for (const [j, c] of checked.entries()) {
    const done = inserted[j]!;
    if ('refused' in done) {
      answers[c.i] = done.refused === 'member_not_found' ? new ApiError('member_not_found') : new ApiError('duplicate_resource', duplicateMessage);
      continue;
    }
    const { row } = done;
    posted.push({ i: c.i, row, asset: c.asset });
    postings.push({
      entry: {
        environment, merchantId, kind: entryKinds.deposit, referenceType: 'deposit', referenceId: row.id, asset: row.asset,
        lines: depositLines({ memberId: row.member_id, merchantId, amount: c.amount }),
      },
      event: {
        merchantId, environment, type: 'deposit.credited', object: 'deposit', objectId: row.id,
        externalMemberId: done.externalMemberId, status: 'credited', statusVersion: 1,
      },
    });
  }
  const outcomes = await postEntries(trx, postings);
  for (const [k, p] of posted.entries()) {
    const outcome = outcomes[k]!;
    if (outcome instanceof Error) throw new Error(`deposits: the posting of ${p.row.id} was refused in a batch`, { cause: outcome });
    answers[p.i] = depositView(p.row, p.asset);
  }
  return answers;
}


/**
 * The values the answer of a deposit is rendered with before `mwa_deposit_batch` runs, where the
 * statement puts the member's id (the request may name the external id) and the time. Each is
 * found as a whole property of the rendered JSON (`"member_id":"…"`): a string the request sent
 * is escaped inside it and cannot take that place.
 */
const openMember = 'mem_to_be_named';
const openTime = '2000-01-01T00:00:00.000Z';
const memberProperty = `"member_id":${JSON.stringify(openMember)}`;
const timeProperty = `"created_at":${JSON.stringify(openTime)}`;

/** The rendered answer around its two open values: before the member's id, between it and the time, after the time. */
function aroundOpenValues(body: string): [string, string, string] {
  const m = body.indexOf(memberProperty);
  const t = body.indexOf(timeProperty);
  if (m < 0 || t < m || body.indexOf(memberProperty, m + 1) >= 0 || body.indexOf(timeProperty, t + 1) >= 0) {
    throw new Error('deposits: the rendered answer has no single place for the member and the time');
  }
  const memberAt = m + '"member_id":'.length;
  const timeAt = t + '"created_at":'.length;
  return [body.slice(0, memberAt), body.slice(m + memberProperty.length, timeAt), body.slice(t + timeProperty.length)];
}

/**
 * The two refusals the statement may choose, rendered for every write (each body carries its
 * request's id). Made once: an `Error` captures its stack when made (~20 µs here), and these are
 * only rendered, never thrown.
 */
const notFoundToRender = new ApiError('member_not_found');
const duplicateToRender = new ApiError('duplicate_resource', duplicateMessage);

/**
 * `createDeposits` with the group commit's claim and records, in one autocommitted statement
 * (`mwa_deposit_batch`, migration 043; docs/group-commit.md "One statement a batch"). `prepare`
 * checks each deposit's own fields as `createDeposits` checks them (a refusal's body is stored by
 * the statement if the write runs) and renders its answer, which the statement completes; `run`
 * gathers a batch's prepared deposits into the call. The refusals, their order and what is
 * written are those of `createDeposits`.
 */
export const depositsInOneStatement: BatchStatement<DepositItem, PreparedDeposit> = { prepare: prepareDeposit, run: runDeposits };

/** A deposit's own part of the batch statement: its ids and refusal bodies, and its checked fields and rendered answer or the refusal found by its checks. */
export interface PreparedDeposit {
  id: string;
  entryId: string;
  eventId: string;
  notFoundBody: string;
  duplicateBody: string;
  refused?: { refusal: ApiError; body: string };
  accepted?: {
    status: number;
    body: [string, string, string];
    asset: string;
    network: string | null;
    amount: string;
    lines: StatementLine[];
  };
}

async function prepareDeposit(db: Kysely<Database>, { item, render, refusalOf, refusalBody }: StatementWrite<DepositItem>): Promise<PreparedDeposit> {
  const { merchantId, environment } = item;
  const id = newId('dep');
  const prepared: PreparedDeposit = {
    id, entryId: newId('jrn'),
    eventId: eventRow({ merchantId, environment, type: 'deposit.credited', object: 'deposit', objectId: id, externalMemberId: null, status: 'credited', statusVersion: 1 }).id,
    notFoundBody: refusalBody(notFoundToRender), duplicateBody: refusalBody(duplicateToRender),
  };
  let checked: Awaited<ReturnType<typeof checkDeposit>>;
  try {
    checked = await checkDeposit(db, item.input);
  } catch (err) {
    const refusal = refusalOf(err);
    if (!refusal) throw err;
    return { ...prepared, refused: { refusal, body: refusalBody(refusal) } };
  }
  const { asset, network, amount } = checked;
  const answer = render(depositView({
    id, member_id: openMember, asset: asset.code, network: network ?? null, amount: amount.toString(), tx_hash: item.input.tx_hash,
    status: 'credited', created_at: new Date(openTime),
  }, asset));
  const entry = {
    environment, merchantId, kind: entryKinds.deposit, referenceType: 'deposit', referenceId: id, asset: asset.code,
    lines: depositLines({ memberId: openMember, merchantId, amount }),
  };
  return {
    ...prepared,
    accepted: {
      status: answer.status, body: aroundOpenValues(answer.body), asset: asset.code, network: network ?? null, amount: amount.toString(),
      lines: linesForStatement(entry, openMember),
    },
  };
}

async function runDeposits(
  db: Kysely<Database>, claims: StatementClaims, writes: readonly StatementWrite<DepositItem>[], prepared: readonly PreparedDeposit[],
): Promise<StatementRow[]> {
  const { merchantId } = claims;
  const environment = claims.environment as Environment;
  const none = writes.map(() => null);
  const args: DepositBatchArgs = {
    now: scopeNowSql(merchantId, environment),
    refusedStatus: [...none], refusedBodies: [...none], ids: prepared.map((p) => p.id), memberRefs: [...none], assets: [...none],
    networks: [...none], amounts: [...none], txHashes: [...none], okStatus: 0, bodyHeads: [...none], bodyMids: [...none], bodyTails: [...none],
    notFoundStatus: errorStatus('member_not_found'), notFoundBodies: prepared.map((p) => p.notFoundBody),
    duplicateStatus: errorStatus('duplicate_resource'), duplicateBodies: prepared.map((p) => p.duplicateBody),
    entryIds: prepared.map((p) => p.entryId), entryKind: entryKinds.deposit, referenceType: 'deposit', lines: [], eventIds: prepared.map((p) => p.eventId),
    event: { type: 'deposit.credited', object: 'deposit', status: 'credited', statusVersion: 1, livemode: environment === 'production' },
  };
  for (const [i, { item }] of writes.entries()) {
    if (item.merchantId !== merchantId || item.environment !== environment) throw new Error('deposits: a batch holds one merchant');
    const { refused, accepted } = prepared[i]!;
    if (refused) {
      args.refusedStatus[i] = refused.refusal.status;
      args.refusedBodies[i] = refused.body;
      continue;
    }
    if (!accepted) throw new Error('deposits: a prepared deposit is neither accepted nor refused');
    if (args.okStatus !== 0 && args.okStatus !== accepted.status) throw new Error('deposits: the answers of one batch have one status');
    args.okStatus = accepted.status;
    [args.bodyHeads[i], args.bodyMids[i], args.bodyTails[i]] = accepted.body;
    args.memberRefs[i] = item.input.member_id;
    args.assets[i] = accepted.asset;
    args.networks[i] = accepted.network;
    args.amounts[i] = accepted.amount;
    args.txHashes[i] = item.input.tx_hash;
    for (const line of accepted.lines) args.lines.push({ ...line, item: i + 1 });
  }
  const rows = await depositBatch(db, claims, args);
  return rows.map((r, i): StatementRow => {
    const record = r.endpoint == null ? undefined : {
      endpoint: r.endpoint, request_hash: r.request_hash!, status_code: r.status_code!, response_body: r.response_body!, created_at: r.created_at!,
    };
    const row: StatementRow = { fresh: r.fresh, locked: r.locked, ran: r.ran, ...(record ? { record } : {}) };
    if (!r.ran) return row;
    switch (r.outcome) {
      case 'ok': return { ...row, answer: { status: r.status_code!, body: r.response_body! } };
      case 'member_not_found': return { ...row, answer: { refusal: new ApiError('member_not_found') } };
      case 'duplicate_resource': return { ...row, answer: { refusal: new ApiError('duplicate_resource', duplicateMessage) } };
      case 'refused': return { ...row, answer: { refusal: prepared[i]!.refused!.refusal } };
      default: throw new Error(`deposits: the batch statement answered ${String(r.outcome)}`);
    }
  });
}

export type { Caller } from './queries.js';

/** Ids that can name a row: anything else (control characters, other alphabets) finds nothing. */
const idShape = /^[A-Za-z0-9_.:-]{1,100}$/;

async function scaleOf(db: Db, code: string): Promise<number> {
  const a = await getAsset(db, code);
  if (!a) throw new Error(`deposits: asset ${code} missing from the catalogue`);
  return a.scale;
}

/** One of the merchant's deposits in the caller's environment (on behalf of a member: only its own). */
export async function getDeposit(db: Db, caller: Caller, id: string) {
  if (!idShape.test(id)) throw new ApiError('not_found', 'No such deposit.');
  const row = await findDeposit(db, caller, withPrefix('dep', id));
  if (!row) throw new ApiError('not_found', 'No such deposit.');
  return depositView(row, { scale: await scaleOf(db, row.asset) });
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
    const member = idShape.test(query.member_id) ? await resolveMember(db, caller.merchantId, caller.environment, query.member_id) : undefined;
    if (!member || (memberId !== undefined && member.id !== memberId)) return constantList([]);
    memberId = member.id;
  }
  const page = await depositPage(db, caller, {
    memberId, asset: query.asset?.toUpperCase(), createdGte: query.created_gte, createdLt: query.created_lt,
  }, query);
  return pageAtScale(db, page, (r, scale) => depositView(r, { scale }));
}
