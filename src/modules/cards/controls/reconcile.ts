/**
 * Reconciliation of merchant-rule sets left unconfirmed after a 502 that nobody retried (docs/cards.md,
 * "Reconciliation"; the reference's unowned key): the issuer is asked for the request's state;
 * done → `synced: true`; refused → the confirmed set comes back; never received → pushed again
 * under the same request id. A timed process on the merchant's clock (shared/workers.ts runs it),
 * every change conditional under the row's lock.
 */
import { sql } from 'kysely';
import type { ServiceContext } from '../../../service-context.js';
import type { TimedProcess } from '../../../jobs/types.js';
import type { ClockScope } from '../../../platform/clock.js';
import { reportFailure } from '../../../jobs/failures.js';
import { withDeadline } from '../../../upstreams/deadline.js';
import { reconcileStalledAfterChecks } from '../../../provider-orders/index.js';
import { raiseAlert } from '../../alerts/index.js';
import { confirmRules, restoreConfirmedRules, storedRuleSet } from './merchant-rules.js';
import type { Db } from '../shared/queries.js';
import { nextCheck, reconcileBatchMax } from '../shared/reconcile.js';
import { rulesCallDecision, rulesQueryDecision, type RulesReconcileDecision } from './state.js';

export const rulesReconcileName = 'card.merchant_rules_reconcile';

/** Unconfirmed rule sets of the scope's cards. */
const openRuleSets = (db: Db, scope: ClockScope) =>
  db
    .selectFrom('card_merchant_rules')
    .innerJoin('cards', 'cards.id', 'card_merchant_rules.card_id')
    .where('cards.merchant_id', '=', scope.merchantId)
    .where('cards.environment', '=', scope.environment)
    .where('card_merchant_rules.synced', '=', false)
    .where('card_merchant_rules.next_check_at', 'is not', null);

interface OpenRuleSet {
  card_id: string;
  request_id: string;
  check_count: number;
  updated_at: Date;
  upstream_ref: string;
  merchant_id: string;
  environment: ClockScope['environment'];
}

/** Asks the issuer about one unconfirmed set's request and applies the answer (once, under the row's lock). */
export async function reconcileRuleSet(ctx: ServiceContext, open: OpenRuleSet, now: Date): Promise<void> {
  const call = { merchantId: open.merchant_id, environment: open.environment };
  const answer = await withDeadline(ctx.config.upstreamCallTimeoutMs, () =>
    ctx.upstreams.card.status(call, open.request_id),
  );
  const ageMs = now.getTime() - new Date(open.updated_at).getTime();
  let decision: RulesReconcileDecision = rulesQueryDecision(answer, ageMs, ctx.config.upstreamNotFoundGraceMs);
  if (decision.kind === 'repush') {
    const row = await ctx.db
      .selectFrom('card_merchant_rules')
      .selectAll()
      .where('card_id', '=', open.card_id)
      .executeTakeFirstOrThrow();
    if (row.request_id !== open.request_id || row.synced) return;
    const set = storedRuleSet(row);
    const outcome = await withDeadline(ctx.config.upstreamCallTimeoutMs, () =>
      ctx.upstreams.card.setMerchantRules(call, {
        requestId: open.request_id,
        cardRef: open.upstream_ref,
        rules: set ? { ruleType: set.rule_type, merchantNames: set.merchant_names, mccList: set.mcc_list } : null,
      }),
    );
    decision = rulesCallDecision(outcome);
  }
  await ctx.db.transaction().execute(async (trx) => {
    const row = await trx
      .selectFrom('card_merchant_rules')
      .selectAll()
      .where('card_id', '=', open.card_id)
      .forUpdate()
      .executeTakeFirst();
    // Settled meanwhile, or replaced by a later request (which reconciles on its own).
    if (!row || row.synced || row.request_id !== open.request_id) return;
    if (decision.kind === 'confirm') return confirmRules(trx, row.card_id, storedRuleSet(row), now);
    if (decision.kind === 'refused') return restoreConfirmedRules(trx, row.card_id, row.confirmed, now);
    const checks = row.check_count + 1;
    await trx
      .updateTable('card_merchant_rules')
      .set({ check_count: checks, next_check_at: nextCheck(ctx, checks, now) })
      .where('card_id', '=', row.card_id)
      .execute();
    if (checks === reconcileStalledAfterChecks) {
      await raiseAlert(trx, {
        kind: 'upstream.reconciliation_stalled',
        merchantId: open.merchant_id,
        environment: open.environment,
        object: 'card',
        objectId: row.card_id,
        message:
          `Card ${row.card_id}: its merchant rules are still unconfirmed by the issuer after ${checks} status ` +
          `queries.`,
      });
    }
  });
}

export const rulesReconcileProcess: TimedProcess = {
  name: rulesReconcileName,
  async nextDue(db, scope) {
    const row = await openRuleSets(db, scope)
      .select(sql<Date | null>`min(card_merchant_rules.next_check_at)`.as('due'))
      .executeTakeFirst();
    return row?.due ? new Date(row.due) : null;
  },
  async runDue(ctx, scope, now) {
    const due = await openRuleSets(ctx.db, scope)
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
      .limit(reconcileBatchMax)
      .execute();
    for (const open of due) {
      try {
        await reconcileRuleSet(ctx, open, now);
      } catch (err) {
        reportFailure(
          ctx,
          { job: rulesReconcileName, attempt: open.check_count + 1 },
          err,
          `card ${open.card_id}: merchant-rules reconciliation failed; retried later`,
        );
        await ctx.db
          .updateTable('card_merchant_rules')
          .set({ next_check_at: nextCheck(ctx, open.check_count + 1, now) })
          .where('card_id', '=', open.card_id)
          .where('next_check_at', '<=', now)
          .execute();
      }
    }
  },
};
