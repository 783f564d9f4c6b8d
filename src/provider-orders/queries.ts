import { sql, type AliasedRawBuilder, type Kysely, type RawBuilder, type Transaction } from 'kysely';
import { claimStatusMove } from '../db/status-move.js';
import type { Database, Db } from '../db/schema.js';
import { scopeNowSql } from '../platform/queries/clock.js';
import { openOrderStatuses } from './lifecycle.js';
import type { DispatchedOrdersTable, LifecycleOrdersTable } from './tables.js';

/**
 * The statements of an order handed to a provider (store.ts has the rules around them), on the
 * area's own order table, named by `table`: every order table has the columns of
 * `LifecycleOrdersTable`.
 */

type LifecycleDb = Record<string, LifecycleOrdersTable>;
export type Fields = Record<string, unknown>;

/** The area's table seen through the lifecycle's columns (the SQL names the area's real table). */
const ordersOf = (db: Db) => db as unknown as Kysely<LifecycleDb>;

/** The order's merchant's time (a sandbox merchant's own clock), for the order's timestamps in an UPDATE of it. */
export function orderNowSql(store: { table: string }): RawBuilder<Date> {
  return scopeNowSql(sql.ref(`${store.table}.merchant_id`), sql.ref(`${store.table}.environment`));
}

export interface Move {
  to: string;
  /** The statuses the order may leave for `to` (the claim's WHERE). */
  from: readonly string[];
  /** The column stamped with the merchant's time (`completed_at`). */
  at: string;
  fields: Fields;
  /** More columns the moved row is answered with, read by the claim itself (`(SELECT …) AS name`). */
  returning?: readonly AliasedRawBuilder<unknown, string>[];
}

/** What an area adds to a claim: a condition of its own and more columns of the claimed row. */
export interface ClaimExtras {
  where?: RawBuilder<boolean>;
  returning?: readonly AliasedRawBuilder<unknown, string>[];
}

/** The claim of a move: one conditional UPDATE that bumps status_version; the moved row, or undefined. */
export function updateMove(trx: Transaction<Database>, table: string, id: string, move: Move) {
  const now = orderNowSql({ table });
  return claimStatusMove<LifecycleOrdersTable>(trx, table, id, {
    from: move.from,
    to: move.to,
    at: now,
    set: { ...move.fields, [move.at]: now },
    ...(move.returning ? { returning: move.returning } : {}),
  });
}

/** A processing order suspended (status_version does not move); the row, or undefined when not processing. */
export async function updateSuspended(trx: Transaction<Database>, table: string, id: string, fields: Fields) {
  const store = { table };
  const claimed = await ordersOf(trx)
    .updateTable(table)
    .set({ ...fields, status: 'suspended', upstream_outcome: 'accepted', updated_at: orderNowSql(store) })
    .where('id', '=', id)
    .where('status', '=', 'processing')
    .returningAll()
    .executeTakeFirst();
  return claimed;
}

/** The re-query schedule of an open order (`recheckDelayMs`, lifecycle.ts, computed by the statement). */
export interface CheckSchedule {
  /** Added to the order's check count (1 for a status query, 0 for the call's answer). */
  increment: number;
  baseMs: number;
  maxMs: number;
  /** Stamps last_checked_at. */
  checked: boolean;
}

/** One order's news for `updateWaitsAndSchedule`: what the provider said and the columns it sets. */
export interface WaitNews {
  id: string;
  outcome: string;
  fields: Fields;
}

/**
 * What the provider said of orders that stay open (`onlyPending`: not over what a query has
 * learnt since) and their re-query schedule (`scheduleCheck`), in one statement for many orders of
 * one table: each order's own news (`fields`, typed by the table's row through
 * `jsonb_populate_record`; a column an order does not give keeps its value), its check count and
 * next re-query: due `recheckDelayMs(max(1, count), baseMs, maxMs)` from now, the count being the
 * one the statement finds plus `increment`. The rows as updated, in no particular order (an order
 * no longer open is not among them).
 */
export async function updateWaitsAndSchedule<Row>(
  trx: Transaction<Database>,
  table: string,
  news: readonly WaitNews[],
  onlyPending: boolean,
  schedule: CheckSchedule,
): Promise<Row[]> {
  if (news.length === 0) return [];
  const columns = [...new Set(news.flatMap((n) => Object.keys(n.fields)))];
  const fresh = onlyPending ? sql<boolean>`o.upstream_outcome = 'pending'` : sql<boolean>`true`;
  const ifNews = (column: string, value: RawBuilder<unknown>) =>
    sql`CASE WHEN ${fresh} THEN ${value} ELSE o.${sql.ref(column)} END`;
  const said = columns.map(
    (c) => sql`${sql.ref(c)} = ${ifNews(c, sql`COALESCE((v.said).${sql.ref(c)}, o.${sql.ref(c)})`)}`,
  );
  const checks = sql<number>`GREATEST(1, o.check_count + ${schedule.increment})`;
  const delayMs =
    schedule.baseMs <= 0
      ? sql<number>`0`
      : sql<number>`LEAST(${schedule.maxMs}::float8,
          ${schedule.baseMs}::float8 * power(2::float8, LEAST(${checks} - 1, 30)))`;
  const now = scopeNowSql(sql.ref('o.merchant_id'), sql.ref('o.environment'));
  const { rows } = await sql<Row>`
    UPDATE ${sql.table(table)} AS o SET
      ${sql.join([
        ...said,
        sql`upstream_outcome = ${ifNews('upstream_outcome', sql`v.outcome`)}`,
        sql`updated_at = ${ifNews('updated_at', now)}`,
        sql`check_count = o.check_count + ${schedule.increment}`,
        sql`next_check_at = now() + make_interval(secs => ${delayMs} / 1000)`,
        ...(schedule.checked ? [sql`last_checked_at = now()`] : []),
      ])}
    FROM (
      SELECT u.id, u.outcome, jsonb_populate_record(NULL::${sql.table(table)}, u.said) AS said
      FROM unnest(${news.map((n) => n.id)}::text[], ${news.map((n) => n.outcome)}::text[],
                  ${news.map((n) => JSON.stringify(n.fields))}::jsonb[]) AS u(id, outcome, said)
    ) AS v
    WHERE o.id = v.id AND o.status IN (${sql.join(openOrderStatuses)})
    RETURNING o.*`.execute(trx);
  return rows;
}

/** Orders' rows by id, in no particular order. */
export async function selectOrders<Row>(
  trx: Transaction<Database>,
  table: string,
  ids: readonly string[],
): Promise<Row[]> {
  if (ids.length === 0) return [];
  return (await ordersOf(trx).selectFrom(table).selectAll().where('id', 'in', ids).execute()) as unknown as Row[];
}

/** An order's row. */
export async function selectOrder<Row>(trx: Transaction<Database>, table: string, id: string): Promise<Row> {
  const db = ordersOf(trx);
  const row = (await db.selectFrom(table).selectAll().where('id', '=', id).executeTakeFirstOrThrow()) as unknown as Row;
  return row;
}

/** Sets an open order's check count and next re-query (`delayMs` from now); `checked`: stamps last_checked_at. */
export async function scheduleCheck<Row>(
  trx: Transaction<Database>,
  table: string,
  id: string,
  checks: number,
  delayMs: number,
  checked: boolean,
): Promise<Row> {
  const db = ordersOf(trx);
  return (await db
    .updateTable(table)
    .set({
      check_count: checks,
      next_check_at: sql<Date>`now() + make_interval(secs => ${delayMs / 1000})` as unknown as Date,
      ...(checked ? { last_checked_at: sql<Date>`now()` as unknown as Date } : {}),
    })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow()) as unknown as Row;
}

/**
 * Claims up to `batchMax` due open orders (SKIP LOCKED, so concurrent processes take different
 * ones), other than those of `excluding`; the claim pushes next_check_at out by `leaseSeconds`.
 */
export async function claimDueOrders<Row>(
  db: Kysely<Database>,
  store: { table: string },
  batchMax: number,
  leaseSeconds: number,
  excluding: readonly string[] = [],
): Promise<Row[]> {
  const rows = await ordersOf(db)
    .updateTable(store.table)
    .set({ next_check_at: sql<Date>`now() + make_interval(secs => ${leaseSeconds})` as unknown as Date })
    .where('id', 'in', (eb) =>
      eb
        .selectFrom(store.table)
        .select('id')
        .where('status', 'in', openOrderStatuses)
        .where('next_check_at', '<=', sql<Date>`now()`)
        .$if(excluding.length > 0, (q) => q.where('id', 'not in', [...excluding]))
        .orderBy('next_check_at')
        .limit(batchMax)
        .forUpdate()
        .skipLocked(),
    )
    .returningAll()
    .execute();
  return rows as unknown as Row[];
}

/**
 * The dispatch claim of one or more orders: `pending` → `processing` once (status_version bumped),
 * the provider call recorded as starting now, and the order due to reconciliation
 * `reconcileAfterSeconds` later should this process stop during the call. One statement; the
 * claimed rows (those still pending), in no particular order.
 */
export async function updateDispatch(
  trx: Transaction<Database>,
  table: string,
  ids: readonly string[],
  reconcileAfterSeconds: number,
  extras: ClaimExtras = {},
): Promise<unknown[]> {
  if (ids.length === 0) return [];
  const db = trx as unknown as Kysely<Record<string, DispatchedOrdersTable>>;
  return db
    .updateTable(table)
    .set((eb) => ({
      status: 'processing',
      status_version: eb('status_version', '+', 1),
      upstream_outcome: 'pending',
      dispatch_started_at: sql<Date>`now()` as unknown as Date,
      next_check_at: sql<Date>`now() + make_interval(secs => ${reconcileAfterSeconds})` as unknown as Date,
      updated_at: orderNowSql({ table }),
    }))
    .where('id', 'in', [...ids])
    .where('status', '=', 'pending')
    .$if(extras.where !== undefined, (q) => q.where(extras.where!))
    .returningAll()
    .$if(extras.returning !== undefined && extras.returning.length > 0, (q) => q.returning(extras.returning!))
    .execute();
}
