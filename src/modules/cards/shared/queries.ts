import { sql, type Kysely, type SelectQueryBuilder } from 'kysely';
import type { Database, Db, Environment } from '../../../db/schema.js';
import { resolveMember } from '../../members/index.js';

/**
 * What the card sub-areas' queries share: the connection type, the callers, id prefixes, members' reads
 * (through the members area's index.ts), the tickers' scope bound. An asset's scale is the assets area's
 * `assetScale`.
 */

/** The one definition (src/db/schema.ts), re-exported for the card sub-areas' imports. */
export type { Db } from '../../../db/schema.js';

/** Who asks: the merchant, and the member when the call is on its behalf. */
export interface CardCaller {
  merchantId: string;
  environment: Environment;
  memberId?: string;
}

export interface MemberCardCaller extends CardCaller {
  memberId: string;
}

/** The merchant and environment of a row: its scope on the merchant's clock, the context of a provider call. */
export const scopeOf = (row: { merchant_id: string; environment: Environment }) => ({
  merchantId: row.merchant_id,
  environment: row.environment,
});

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
