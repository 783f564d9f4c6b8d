/**
 * Reconciliation of merchant-rule sets left unconfirmed after a 502 that nobody retried (docs/cards.md,
 * "Reconciliation"; the reference's unowned key): the issuer is asked for the request's state;
 * done → `synced: true`; refused → the confirmed set comes back; never received → pushed again
 * under the same request id. A timed process on the merchant's clock (shared/workers.ts runs it),
 * every change conditional under the row's lock.
 */
import type { ServiceContext } from '../../../service-context.js';
import type { TimedProcess } from '../../../jobs/types.js';
import type { ClockScope } from '../../../platform/clock.js';
import { withDeadline } from '../../../upstreams/deadline.js';
import { storedRuleSet } from './merchant-rules.js';
import {
  confirmRules,
  dueRuleSets,
  lockMerchantRules,
  merchantRulesRow,
  nextRuleSetCheck,
  restoreConfirmedRules,
  updateMerchantRules,
} from './queries.js';
import { postponeCheck } from '../shared/queries.js';
import { alertWhenStalled, nextCheck, reconcileProcess } from '../shared/reconcile.js';
import { rulesCallDecision, rulesQueryDecision, type RulesReconcileDecision } from './state.js';
import { rowScope } from '../../../db/owned-by.js';

export const rulesReconcileName = 'card.merchant_rules_reconcile';

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
  const call = rowScope(open);
  const answer = await withDeadline(ctx.config.upstreamCallTimeoutMs, () =>
    ctx.upstreams.card.status(call, open.request_id),
  );
  const ageMs = now.getTime() - new Date(open.updated_at).getTime();
  let decision: RulesReconcileDecision = rulesQueryDecision(answer, ageMs, ctx.config.upstreamNotFoundGraceMs);
  if (decision.kind === 'repush') {
    const row = await merchantRulesRow(ctx.db, open.card_id);
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
    const row = await lockMerchantRules(trx, open.card_id);
    // Settled meanwhile, or replaced by a later request (which reconciles on its own).
    if (!row || row.synced || row.request_id !== open.request_id) return;
    if (decision.kind === 'confirm') return confirmRules(trx, row.card_id, storedRuleSet(row), now);
    if (decision.kind === 'refused') return restoreConfirmedRules(trx, row.card_id, row.confirmed, now);
    const checks = row.check_count + 1;
    await updateMerchantRules(trx, row.card_id, { check_count: checks, next_check_at: nextCheck(ctx, checks, now) });
    await alertWhenStalled(
      trx,
      checks,
      { ...rowScope(open), object: 'card', objectId: row.card_id },
      `Card ${row.card_id}: its merchant rules are still unconfirmed by the issuer after ${checks} status queries.`,
    );
  });
}

export const rulesReconcileProcess: TimedProcess = reconcileProcess({
  name: rulesReconcileName,
  nextDue: nextRuleSetCheck,
  due: dueRuleSets,
  check: reconcileRuleSet,
  postpone: (db, open, now, next) => postponeCheck(db, 'card_merchant_rules', open.card_id, now, next),
  failureMessage: (open) => `card ${open.card_id}: merchant-rules reconciliation failed; retried later`,
});
