import type { ExpressionBuilder } from 'kysely';
import type { Caller } from '../platform/caller.js';
import type { Database, Environment } from './schema.js';

/** The tables whose rows belong to a member of a merchant's environment. */
export type MemberOwnedTable = {
  [T in keyof Database]: Database[T] extends { merchant_id: unknown; environment: unknown; member_id: unknown }
    ? T
    : never;
}[keyof Database];

/** The tables whose rows belong to a merchant's environment. */
export type ScopedTable = {
  [T in keyof Database]: Database[T] extends { merchant_id: unknown; environment: unknown } ? T : never;
}[keyof Database];

/**
 * The rows of one merchant's environment (a clock scope: a timed process's rows, or a caller's
 * without the member). For a query's `where`: `.where(inScope(scope))`.
 */
export const inScope =
  (scope: { merchantId: string; environment: Environment }) => (eb: ExpressionBuilder<Database, ScopedTable>) =>
    eb.and([eb('merchant_id', '=', scope.merchantId), eb('environment', '=', scope.environment)]);

/**
 * The caller's rows only (tenant isolation, docs/architecture.md "Design rules"): the merchant's,
 * of its environment, and on behalf of a member that member's own. For a query's `where`:
 * `.where(ownedBy(caller))`.
 */
export const ownedBy = (caller: Caller) => (eb: ExpressionBuilder<Database, MemberOwnedTable>) =>
  eb.and([
    eb('merchant_id', '=', caller.merchantId),
    eb('environment', '=', caller.environment),
    ...(caller.memberId ? [eb('member_id', '=', caller.memberId)] : []),
  ]);

/**
 * The owner columns of a row made on behalf of a member: its merchant, environment and member,
 * what `ownedBy` finds it by. For an insert's values: `{ id, ...ownerColumns(caller), ... }`.
 */
export const ownerColumns = (caller: { merchantId: string; environment: Environment; memberId: string }) => ({
  merchant_id: caller.merchantId,
  environment: caller.environment,
  member_id: caller.memberId,
});

/**
 * The merchant's environment a row belongs to, as the scope the clock, a provider call and a
 * timed process take: `ctx.clock.now(trx, rowScope(order))`.
 */
export const rowScope = (row: { merchant_id: string; environment: Environment }) => ({
  merchantId: row.merchant_id,
  environment: row.environment,
});
