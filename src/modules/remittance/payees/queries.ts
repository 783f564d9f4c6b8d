/** Payees' SQL: shared payees, members' links, the payee id scheme (orders: orders/queries.ts; corridors:
 * corridors/queries.ts). */
import { sql, type Insertable, type Transaction } from 'kysely';
import { ownedBy } from '../../../db/owned-by.js';
import type { Database, Db } from '../../../db/schema.js';
import type { MemberScope as MemberCaller } from '../../../platform/caller.js';
import { payeeIds, type PayeeIds } from './payee-ids.js';
import type { NameCheckResult, PayeeEntityRow, PayeeRow, RemitPayeeEntitiesTable, RemitPayeesTable } from './tables.js';

export type { Db } from '../../../db/schema.js';

/** A payee's caller: always on behalf of one member (the one definition, platform/caller.ts). */
export type { MemberCaller };

/**
 * The shared payee of a fingerprint, created if absent. Race-safe: of concurrent creators one
 * inserts (`created: true`); the others wait for its commit, insert nothing and read its row.
 */
export async function entityFor(
  trx: Transaction<Database>,
  values: Insertable<RemitPayeeEntitiesTable>,
): Promise<{ entity: PayeeEntityRow; created: boolean }> {
  const inserted = await trx
    .insertInto('remit_payee_entities')
    .values(values)
    .onConflict((oc) => oc.columns(['environment', 'fingerprint']).doNothing())
    .returningAll()
    .executeTakeFirst();
  if (inserted) return { entity: inserted, created: true };
  const entity = await trx
    .selectFrom('remit_payee_entities')
    .selectAll()
    .where('environment', '=', values.environment)
    .where('fingerprint', '=', values.fingerprint)
    .executeTakeFirstOrThrow();
  return { entity, created: false };
}

/*
 * The payee id scheme of a database handle, read once: the row never changes after its migration.
 * Kept by the handle's dialect adapter, which its transactions and plugin-extended handles share,
 * so a service's scheme is never another's (tests run several in one process, each database with
 * its own key); the same reading as the asset cache (assets/catalogue-cache.ts).
 */
const schemes = new WeakMap<object, Promise<PayeeIds>>();

/** The one mapping between link sequences and `pye_<number>` (payee-ids.ts). */
export function payeeIdsOf(db: Db): Promise<PayeeIds> {
  const holder = db.getExecutor().adapter;
  let ids = schemes.get(holder);
  if (!ids) {
    ids = loadPayeeIds(db);
    schemes.set(holder, ids);
    ids.catch(() => schemes.delete(holder));
  }
  return ids;
}

async function loadPayeeIds(db: Db): Promise<PayeeIds> {
  const row = await db.selectFrom('remit_payee_id_scheme').select(['key', 'legacy_seq_max']).executeTakeFirst();
  if (!row) throw new Error('remit_payee_id_scheme has no row (migration 040 writes it)');
  return payeeIds({ key: Uint8Array.from(row.key), legacySeqMax: BigInt(row.legacy_seq_max) });
}

/** The member's link by id (another member's or absent: undefined), for one of the reads below. */
async function ownPayee(db: Db, caller: MemberCaller, id: string) {
  const seq = (await payeeIdsOf(db)).seqOf(id);
  if (seq === undefined) return undefined;
  return db.selectFrom('remit_payees').selectAll().where('seq', '=', seq).where(ownedBy(caller));
}

/** The member's active link by id (unlinked, another member's or absent: undefined). */
export async function findActivePayee(db: Db, caller: MemberCaller, id: string): Promise<PayeeRow | undefined> {
  return (await ownPayee(db, caller, id))?.where('status', '=', 'active').executeTakeFirst();
}

/**
 * `findActivePayee` for many (member, id) at once (a batch of orders): one statement, answered in
 * the order given (unlinked, another member's or absent: undefined).
 */
export async function findActivePayees(
  db: Db,
  asks: readonly { caller: MemberCaller; id: string }[],
): Promise<(PayeeRow | undefined)[]> {
  const ids = await payeeIdsOf(db);
  const seqs = asks.map((a) => ids.seqOf(a.id)?.toString());
  const wanted = [...new Set(seqs.filter((s): s is string => s !== undefined))];
  const rows =
    wanted.length === 0
      ? []
      : await db
          .selectFrom('remit_payees')
          .selectAll()
          .where('seq', '=', sql<bigint>`ANY(${wanted}::text[]::bigint[])`)
          .where('status', '=', 'active')
          .execute();
  const bySeq = new Map(rows.map((r) => [r.seq.toString(), r]));
  return asks.map(({ caller }, k) => {
    const row = seqs[k] === undefined ? undefined : bySeq.get(seqs[k]);
    const own =
      row?.merchant_id === caller.merchantId &&
      row.environment === caller.environment &&
      row.member_id === caller.memberId;
    return own ? row : undefined;
  });
}

/** The member's link by id in any status (DELETE answers a repeat from it). */
export async function findOwnPayee(db: Db, caller: MemberCaller, id: string): Promise<PayeeRow | undefined> {
  return (await ownPayee(db, caller, id))?.executeTakeFirst();
}

export async function entityById(db: Db, id: string): Promise<PayeeEntityRow> {
  return db.selectFrom('remit_payee_entities').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

/** The member's active links, for the grouped keyset walk (favourites first, then newest). */
export function activePayeesQuery(db: Db, caller: MemberCaller) {
  return db.selectFrom('remit_payees').selectAll().where(ownedBy(caller)).where('status', '=', 'active');
}

/** Shared payees by id (a page's worth). */
export async function entitiesByIds(db: Db, ids: string[]): Promise<Map<string, PayeeEntityRow>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .selectFrom('remit_payee_entities')
    .selectAll()
    .where('id', 'in', [...new Set(ids)])
    .execute();
  return new Map(rows.map((r) => [r.id, r]));
}

/** The entity type each payee link gives its entity (the provider's registration), by link seq: one statement. */
export async function entityTypesBySeq(db: Db, seqs: readonly string[]): Promise<Map<string, string>> {
  if (seqs.length === 0) return new Map();
  const rows = await db
    .selectFrom('remit_payees')
    .select(['seq', 'entity_type'])
    .where('seq', 'in', [...new Set(seqs)] as never[])
    .execute();
  return new Map(rows.map((r) => [String(r.seq), r.entity_type]));
}

/** The provider's references of registered entities, each kept once (the first registration wins): one statement. */
export async function recordProviderPayeeRefs(
  db: Db,
  refs: readonly { entityId: string; payeeRef: string }[],
): Promise<void> {
  if (refs.length === 0) return;
  await sql`
    UPDATE remit_payee_entities e SET provider_payee_ref = r.payee_ref, registered_at = now()
    FROM unnest(${refs.map((r) => r.entityId)}::text[], ${refs.map((r) => r.payeeRef)}::text[]) AS r(id, payee_ref)
    WHERE e.id = r.id AND e.provider_payee_ref IS NULL
  `.execute(db);
}

/**
 * Links the member to a shared payee; the link's seq, or undefined when the member's active link
 * exists. One active link per member and payee: a concurrent request (another key) finds the
 * first. The predicate is a literal: PostgreSQL infers a partial unique index only from a
 * constant, not a bound parameter. A review (`review`) is recorded on the link the member already
 * has (spec "Payee outcome": the link is made and a name mismatch is recorded): `name_mismatch`
 * set, in this statement. The link's `outcome` (how it was made), holder name and fields stay: a
 * payee's details are not edited.
 */
export async function linkPayee(
  trx: Transaction<Database>,
  values: Insertable<RemitPayeesTable>,
  review: boolean,
  now: Date,
): Promise<bigint | undefined> {
  const insert = trx.insertInto('remit_payees').values(values);
  const linked = await (
    review
      ? insert.onConflict((oc) =>
          oc
            .columns(['member_id', 'entity_id'])
            .where('status', '=', sql.lit('active'))
            .doUpdateSet({ name_mismatch: true, updated_at: now })
            .where('remit_payees.name_mismatch', '=', false),
        )
      : insert.onConflict((oc) =>
          oc.columns(['member_id', 'entity_id']).where('status', '=', sql.lit('active')).doNothing(),
        )
  )
    .returning('seq')
    .executeTakeFirst();
  return linked?.seq;
}

/** The seq of the member's active link to the entity. */
export async function activeLinkSeq(db: Db, memberId: string, entityId: string): Promise<bigint> {
  const row = await db
    .selectFrom('remit_payees')
    .select('seq')
    .where('member_id', '=', memberId)
    .where('entity_id', '=', entityId)
    .where('status', '=', 'active')
    .executeTakeFirstOrThrow();
  return row.seq;
}

/** The member's own settings of an active link (nickname, favourite). */
export function updateLinkSettings(
  trx: Transaction<Database>,
  seq: bigint,
  set: { nickname?: string | null; favorite?: boolean; updated_at: Date },
) {
  return trx
    .updateTable('remit_payees')
    .set(set)
    .where('seq', '=', seq)
    .where('status', '=', 'active')
    .returning(['seq', 'nickname', 'favorite'])
    .executeTakeFirst();
}

export async function markUnlinked(trx: Transaction<Database>, seq: bigint, now: Date): Promise<void> {
  await trx
    .updateTable('remit_payees')
    .set({ status: 'unlinked', unlinked_at: now, updated_at: now })
    .where('seq', '=', seq)
    .execute();
}

/** The provider's answer to a name check, kept on the member's link. */
export async function recordNameCheck(
  db: Db,
  seq: bigint,
  set: { name_check: NameCheckResult; name_check_suggestion: string | null; name_checked_at: Date; updated_at: Date },
): Promise<void> {
  await db.updateTable('remit_payees').set(set).where('seq', '=', seq).execute();
}
