import { sql } from 'kysely';
import type { Environment, Db } from '../../db/schema.js';
import { baseBucket, formatAmount, minorFromDb } from '../../money/index.js';
import { type ListEnvelope, type PageParams } from '../../platform/routes/pagination.js';
import { keysetPage } from '../../db/keyset-page.js';

/**
 * The merchant's journal as the API shows it (extensions 13, docs/ledger.md "The merchant's
 * journal"): its entries (`journal_entries.merchant_id`), each with every posting as a line. An
 * entry of a merchant touches only its members' accounts, its own and the platform's accounts
 * kept for it (`assertEntry`), so no line names another merchant's account. A platform account is
 * shown as the merchant's counter-account: owner `merchant`, the merchant's id, bucket
 * `platform:<bucket>` (the platform's side of this merchant's business; a shared platform row of
 * before migration 026 is shown the same way, as this merchant's part of it), so every entry's
 * lines still balance to zero.
 */

export interface EntryRow {
  seq: bigint | string;
  id: string;
  created_at: Date;
  kind: string;
  reference_type: string;
  reference_id: string;
  asset: string;
}

export interface LineRow {
  entry_id: string;
  owner_type: string;
  owner_id: string;
  bucket: string;
  amount: string;
  scale: number;
}

export interface LedgerLine {
  account: { owner: 'member' | 'merchant'; owner_id: string; bucket: string };
  asset: string;
  debit: string;
  credit: string;
}

export interface LedgerEntryView {
  id: string;
  created_at: string;
  kind: string;
  reference: { object: string; id: string };
  lines: LedgerLine[];
}

export interface EntryFilter {
  merchantId: string;
  environment: Environment;
  /** Entries with a posting on one of this member's accounts. */
  memberId?: string;
  asset?: string;
  referenceId?: string;
  createdGte?: Date;
  createdLt?: Date;
}

/** Public ids are `jre_<uuid>`; the journal stores `jrn_<uuid>`. */
export const publicEntryId = (id: string): string => `jre_${id.slice(id.indexOf('_') + 1)}`;
export const storedEntryId = (id: string): string => `jrn_${id.startsWith('jre_') ? id.slice(4) : id}`;

export function entriesQuery(db: Db, f: EntryFilter) {
  let q = db
    .selectFrom('journal_entries as e')
    .select(['e.seq', 'e.id', 'e.created_at', 'e.kind', 'e.reference_type', 'e.reference_id', 'e.asset'])
    .where('e.merchant_id', '=', f.merchantId)
    .where('e.environment', '=', f.environment);
  if (f.asset !== undefined) q = q.where('e.asset', '=', f.asset);
  if (f.referenceId !== undefined) q = q.where('e.reference_id', '=', f.referenceId);
  if (f.createdGte !== undefined) q = q.where('e.created_at', '>=', f.createdGte);
  if (f.createdLt !== undefined) q = q.where('e.created_at', '<', f.createdLt);
  if (f.memberId !== undefined) {
    const memberId = f.memberId;
    q = q.where(sql<boolean>`e.id IN (SELECT p.entry_id FROM postings p JOIN ledger_accounts a ON a.id = p.account_id
      WHERE a.environment = ${f.environment} AND a.owner_type = 'member' AND a.owner_id = ${memberId})`);
  }
  return q;
}

/** The lines of the given entries, in posting order. */
export async function linesOf(db: Db, entryIds: readonly string[]): Promise<Map<string, LineRow[]>> {
  const out = new Map<string, LineRow[]>();
  if (entryIds.length === 0) return out;
  const { rows } = await sql<LineRow>`
    SELECT p.entry_id, a.owner_type, a.owner_id, a.bucket, p.amount::text AS amount, s.scale
    FROM postings p JOIN ledger_accounts a ON a.id = p.account_id JOIN assets s ON s.code = p.asset
    WHERE p.entry_id = ANY(${entryIds as string[]}::text[])
    ORDER BY p.id`.execute(db);
  for (const r of rows) {
    const list = out.get(r.entry_id) ?? [];
    list.push(r);
    out.set(r.entry_id, list);
  }
  return out;
}

export function lineView(merchantId: string, asset: string, r: LineRow): LedgerLine {
  const amount = minorFromDb(r.amount);
  const account =
    r.owner_type === 'member'
      ? { owner: 'member' as const, owner_id: r.owner_id, bucket: r.bucket }
      : r.owner_type === 'merchant'
        ? { owner: 'merchant' as const, owner_id: r.owner_id, bucket: r.bucket }
        : { owner: 'merchant' as const, owner_id: merchantId, bucket: `platform:${baseBucket(r.bucket)}` };
  return {
    account,
    asset,
    debit: formatAmount(amount > 0n ? amount : 0n, r.scale),
    credit: formatAmount(amount < 0n ? -amount : 0n, r.scale),
  };
}

export function entryView(merchantId: string, e: EntryRow, lines: readonly LineRow[]): LedgerEntryView {
  return {
    id: publicEntryId(e.id),
    created_at: new Date(e.created_at).toISOString(),
    kind: e.kind,
    reference: { object: e.reference_type, id: e.reference_id },
    lines: lines.map((l) => lineView(merchantId, e.asset, l)),
  };
}

export async function entryPage(db: Db, f: EntryFilter, page: PageParams): Promise<ListEnvelope<LedgerEntryView>> {
  const rows = await keysetPage(entriesQuery(db, f), page);
  const lines = await linesOf(
    db,
    rows.data.map((r) => r.id),
  );
  return { ...rows, data: rows.data.map((r) => entryView(f.merchantId, r, lines.get(r.id) ?? [])) };
}

export async function findEntry(
  db: Db,
  merchantId: string,
  environment: Environment,
  storedId: string,
): Promise<LedgerEntryView | undefined> {
  const row = await entriesQuery(db, { merchantId, environment }).where('e.id', '=', storedId).executeTakeFirst();
  if (!row) return undefined;
  return entryView(merchantId, row, (await linesOf(db, [row.id])).get(row.id) ?? []);
}
