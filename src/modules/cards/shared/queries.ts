import { sql, type Kysely, type SelectQueryBuilder, type Selectable } from 'kysely';
import { ownedBy } from '../../../db/owned-by.js';
import type { Database, Db, Environment } from '../../../db/schema.js';
import { withPrefix } from '../../../platform/ids.js';
import type { Caller as CardCaller, MemberScope as MemberCardCaller } from '../../../platform/caller.js';
import { resolveMember } from '../../members/index.js';

/**
 * What the card sub-areas' queries share: the connection type, the callers, id prefixes, members' reads
 * (through the members area's index.ts), the tickers' scope bound. An asset's scale is the assets area's
 * `assetScale`.
 */

/** The one definitions (src/db/schema.ts), re-exported for the card sub-areas' imports. */
export type { Db, Trx } from '../../../db/schema.js';

/**
 * Who asks: the merchant, and the member when the call is on its behalf (`Caller`); always on a
 * member's behalf (`MemberScope`). The one definitions, platform/caller.ts, under the cards' names.
 */
export type { CardCaller, MemberCardCaller };

/** The id prefix of each card table whose rows a caller finds by id (a path may leave the prefix out). */
const idPrefixes = {
  cards: 'crd',
  card_applications: 'cap',
  card_replacements: 'crp',
  card_transactions: 'ctx',
  card_topups: 'ctu',
} as const;

type OwnedCardTable = keyof typeof idPrefixes;

/** The caller's row of `table` by its id, the prefix optional (a member's own only): a select to narrow or run. */
export function ownedById<T extends OwnedCardTable>(db: Db, table: T, caller: CardCaller, id: string) {
  // Written for one table (Kysely cannot check a column of a table left open): each has the same `id` and owner
  // columns, so the statement is the same for every one.
  const q = db
    .selectFrom(table as OwnedCardTable as 'cards')
    .selectAll()
    .where('id', '=', withPrefix(idPrefixes[table], id))
    .where(ownedBy(caller));
  return q as unknown as SelectQueryBuilder<Database, T, Selectable<Database[T]>>;
}

/** The caller's row of `table` by its id (`ownedById`), locked (`FOR NO KEY UPDATE`) when `forUpdate`. */
export function findOwned<T extends OwnedCardTable>(
  db: Db,
  table: T,
  caller: CardCaller,
  id: string,
  forUpdate = false,
): Promise<Selectable<Database[T]> | undefined> {
  const q = ownedById(db, table, caller, id);
  return (forUpdate ? q.forNoKeyUpdate() : q).executeTakeFirst() as Promise<Selectable<Database[T]> | undefined>;
}

/** The key of each table whose rows the issuer's checks reconcile (shared/reconcile.ts). */
const checkedKeys = { card_applications: 'id', card_merchant_rules: 'card_id' } as const;

/** A failed check of the row of `table` keyed `key` is tried again at `next` (unless another run moved it already). */
export async function postponeCheck(
  db: Db,
  table: keyof typeof checkedKeys,
  key: string,
  now: Date,
  next: Date,
): Promise<void> {
  // Written for one table (Kysely cannot check a column of a table left open): each has `next_check_at`.
  await db
    .updateTable(table as 'card_applications')
    .set({ next_check_at: next })
    .where(checkedKeys[table] as 'id', '=', key)
    .where('next_check_at', '<=', now)
    .execute();
}

/** The member's external id (the events' `external_member_id`), read through the members area. */
export async function externalIdOf(db: Db, row: { merchant_id: string; environment: Environment; member_id: string }) {
  const member = await resolveMember(db, row.merchant_id, row.environment, row.member_id);
  if (!member) throw new Error(`no member ${row.member_id}`);
  return member.external_member_id;
}

/** Scopes a card ticker looks at per tick (a bound). */
const scopesPerTickMax = 200;

/** Due work of the card tickers: its scope and `ahead`, its due time less its scope's own now (≤ 0). */
export type DueWork = SelectQueryBuilder<Database, any, { merchant_id: string; environment: Environment; ahead: Date }>;

/**
 * The scopes of `due`, the longest overdue first, at most `scopesPerTickMax`: a bound over scopes
 * merely waiting, or over due ones in no order while more than the bound stay due, could leave due
 * ones out tick after tick.
 */
export function longestOverdueScopes(db: Kysely<Database>, due: DueWork) {
  return db
    .selectFrom(due.as('due'))
    .select(['due.merchant_id', 'due.environment'])
    .groupBy(['due.merchant_id', 'due.environment'])
    .orderBy(sql`min(due.ahead)`)
    .limit(scopesPerTickMax)
    .execute();
}
