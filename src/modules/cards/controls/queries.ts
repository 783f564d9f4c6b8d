/** Reads and writes of a card's controls: its merchant rules, its limits, its CVV unblock calls. */
import type { Insertable, Transaction, Updateable } from 'kysely';
import { earliestDue } from '../../../db/earliest-due.js';
import type { Database } from '../../../db/schema.js';
import type { Db } from '../shared/queries.js';
import type { ClockScope } from '../../../platform/clock.js';
import type { CardMerchantRulesTable, MerchantRuleSet } from './tables.js';

/** The card's merchant rules row (undefined: none ever set). */
export function merchantRulesOfCard(db: Db, cardId: string) {
  return db.selectFrom('card_merchant_rules').selectAll().where('card_id', '=', cardId).executeTakeFirst();
}

/** The card's merchant rules row, locked (undefined: none ever set). */
export function lockMerchantRules(trx: Db, cardId: string) {
  return trx.selectFrom('card_merchant_rules').selectAll().where('card_id', '=', cardId).forUpdate().executeTakeFirst();
}

export async function updateMerchantRules(
  trx: Db,
  cardId: string,
  set: Updateable<CardMerchantRulesTable>,
): Promise<void> {
  await trx.updateTable('card_merchant_rules').set(set).where('card_id', '=', cardId).execute();
}

export async function insertMerchantRules(trx: Db, values: Insertable<CardMerchantRulesTable>): Promise<void> {
  await trx.insertInto('card_merchant_rules').values(values).execute();
}

/** The issuer refused the stored set: the set it last confirmed comes back (`synced: true`, `synced_at` unchanged). */
export async function restoreConfirmedRules(
  trx: Transaction<Database>,
  cardId: string,
  back: MerchantRuleSet | null,
  now: Date,
): Promise<void> {
  await trx
    .updateTable('card_merchant_rules')
    .set({
      rule_type: back?.rule_type ?? null,
      merchant_names: JSON.stringify(back?.merchant_names ?? []),
      mcc_list: JSON.stringify(back?.mcc_list ?? []),
      synced: true,
      next_check_at: null,
      updated_at: now,
    })
    .where('card_id', '=', cardId)
    .execute();
}

/** The issuer holds the stored set: `synced: true`, `synced_at` now, and it is the confirmed set. */
export async function confirmRules(
  trx: Transaction<Database>,
  cardId: string,
  rules: MerchantRuleSet | null,
  now: Date,
): Promise<void> {
  await trx
    .updateTable('card_merchant_rules')
    .set({ synced: true, synced_at: now, confirmed: JSON.stringify(rules), next_check_at: null, updated_at: now })
    .where('card_id', '=', cardId)
    .execute();
}

export function merchantRulesRow(db: Db, cardId: string) {
  return db.selectFrom('card_merchant_rules').selectAll().where('card_id', '=', cardId).executeTakeFirstOrThrow();
}

export function lockMerchantRulesRow(trx: Db, cardId: string) {
  return trx
    .selectFrom('card_merchant_rules')
    .selectAll()
    .where('card_id', '=', cardId)
    .forUpdate()
    .executeTakeFirstOrThrow();
}

/** Unconfirmed rule sets of the scope's cards. */
const openRuleSets = (db: Db, scope: ClockScope) =>
  db
    .selectFrom('card_merchant_rules')
    .innerJoin('cards', 'cards.id', 'card_merchant_rules.card_id')
    .where('cards.merchant_id', '=', scope.merchantId)
    .where('cards.environment', '=', scope.environment)
    .where('card_merchant_rules.synced', '=', false)
    .where('card_merchant_rules.next_check_at', 'is not', null);

/** Timed process `card.merchant_rules_reconcile`: the earliest next check of the scope's unconfirmed sets. */
export async function nextRuleSetCheck(db: Db, scope: ClockScope): Promise<Date | null> {
  return earliestDue(openRuleSets(db, scope), 'card_merchant_rules.next_check_at');
}

/** The scope's unconfirmed sets whose check is due, the longest waiting first. */
export function dueRuleSets(db: Db, scope: ClockScope, now: Date, limit: number) {
  return openRuleSets(db, scope)
    .select([
      'card_merchant_rules.card_id',
      'card_merchant_rules.request_id',
      'card_merchant_rules.check_count',
      'card_merchant_rules.updated_at',
      'cards.upstream_ref',
      'cards.merchant_id',
      'cards.environment',
    ])
    .where('card_merchant_rules.next_check_at', '<=', now)
    .orderBy('card_merchant_rules.next_check_at')
    .limit(limit)
    .execute();
}

/** The member's CVV unblock calls stamped in (`since`, `ahead`], oldest first. */
export function cvvUnblockCallsBetween(trx: Db, memberId: string, since: Date, ahead: Date) {
  return trx
    .selectFrom('card_cvv_unblock_calls')
    .select('called_at')
    .where('member_id', '=', memberId)
    .where('called_at', '>', since)
    .where('called_at', '<=', ahead)
    .orderBy('called_at')
    .execute();
}

export async function insertCvvUnblockCall(trx: Db, memberId: string, calledAt: Date): Promise<void> {
  await trx.insertInto('card_cvv_unblock_calls').values({ member_id: memberId, called_at: calledAt }).execute();
}

/** The member's calls that left the hour, or stamped too far ahead to count. */
export async function deleteCvvUnblockCallsOutside(trx: Db, memberId: string, since: Date, ahead: Date): Promise<void> {
  await trx
    .deleteFrom('card_cvv_unblock_calls')
    .where('member_id', '=', memberId)
    .where((eb) => eb.or([eb('called_at', '<=', since), eb('called_at', '>', ahead)]))
    .execute();
}
