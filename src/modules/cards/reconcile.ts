/**
 * Reconciliation of the card area's unknown outcomes (docs/cards.md, "Reconciliation"):
 *
 * - applications whose submission timed out or met a 5xx (`pending`, `upstream_outcome` `unknown`,
 *   the opening fee frozen): the issuer is asked for the application's state and its decision is
 *   applied like any other (approved → card opened and fee charged; rejected → fee refunded;
 *   need_docs → supplement work order); in review → the submission is known to have arrived;
 *   never received → submitted again under the same request id; no answer → stays `pending`,
 *   never refunded;
 * - merchant-rule sets left unconfirmed after a 502 that nobody retried (the reference's unowned
 *   key): the issuer is asked for the request's state; done → `synced: true`; refused → the
 *   confirmed set comes back; never received → pushed again under the same request id.
 *
 * Both are timed processes on the merchant's clock (the sandbox clock advance runs them) with
 * the shared backoff of src/provider-orders/lifecycle.ts and its `upstream.reconciliation_stalled`
 * alert; a ticker runs them for every scope with a check due on its own clock. Every change is
 * a conditional one under the row's lock, so a pass racing the request's own answer (or another
 * process) changes nothing twice; the request ids are the issuer's idempotency keys.
 */
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { ServiceContext } from '../../service-context.js';
import type { Ticker, TimedProcess } from '../../jobs/types.js';
import { scopeNowSql, type ClockScope } from '../../platform/clock.js';
import { reportFailure } from '../../jobs/failures.js';
import { withDeadline } from '../../upstreams/deadline.js';
import { reconcileStalledAfterChecks, recheckDelayMs } from '../../provider-orders/index.js';
import { raiseAlert } from '../alerts/queries.js';
import { alertApplicationUnknownStatus, decide } from './applications/service.js';
import { confirmRules, restoreConfirmedRules, storedRuleSet } from './controls/service.js';
import { findApplication, longestOverdueScopes, productBySeq, type Db } from './shared/queries.js';
import { applicationQueryDecision, applicationResubmitDecision, type ApplicationReconcileDecision } from './applications/state.js';
import { rulesCallDecision, rulesQueryDecision, type RulesReconcileDecision } from './controls/state.js';
import type { CardApplicationRow } from './tables.js';

/** Rows looked at per process run (a bound on one batch). */
export const reconcileBatchMax = 50;
export const applicationReconcileName = 'card.application_reconcile';
export const rulesReconcileName = 'card.merchant_rules_reconcile';

const nextCheck = (ctx: ServiceContext, checks: number, now: Date) =>
  new Date(now.getTime() + recheckDelayMs(Math.max(1, checks), ctx.config.upstreamReconcileDelayMs, ctx.config.upstreamReconcileMaxDelayMs));

// ---------------------------------------------------------------------------------------------
// Applications

/** Applications of the scope whose submission outcome is not known yet. */
const openApplications = (db: Db, scope: ClockScope) => db.selectFrom('card_applications')
  .where('merchant_id', '=', scope.merchantId).where('environment', '=', scope.environment)
  .where('status', '=', 'pending').where('upstream_outcome', '<>', 'accepted').where('next_check_at', 'is not', null);

/** Asks the issuer about one application and applies the answer (once, under the row's lock). */
export async function reconcileApplication(ctx: ServiceContext, app: CardApplicationRow, now: Date): Promise<void> {
  const call = { merchantId: app.merchant_id, environment: app.environment };
  const answer = await withDeadline(ctx.config.upstreamCallTimeoutMs, () => ctx.upstreams.card.applicationStatus(call, app.id));
  const callAgeMs = now.getTime() - new Date(app.created_at).getTime();
  let decision: ApplicationReconcileDecision = applicationQueryDecision(answer, callAgeMs, ctx.config.upstreamNotFoundGraceMs);
  if (decision.kind === 'resubmit') {
    const product = (await productBySeq(ctx.db, app.environment, app.product_seq))!;
    const outcome = await withDeadline(ctx.config.upstreamCallTimeoutMs, () =>
      ctx.upstreams.card.submitApplication(call, { requestId: app.id, bin: product.bin, formFactor: product.form_factor }));
    decision = applicationResubmitDecision(outcome);
  }
  await ctx.db.transaction().execute(async (trx) => {
    const locked = await findApplication(trx, call, app.id, true);
    if (!locked || locked.status !== 'pending' || locked.upstream_outcome === 'accepted' || locked.next_check_at === null) return;
    const checks = locked.check_count + 1;
    if (decision.kind === 'decide') {
      await trx.updateTable('card_applications').set({ check_count: checks }).where('id', '=', app.id).execute();
      await decide(ctx, trx, { ...locked, check_count: checks }, decision.decision, answer.kind === 'found' ? answer.card : undefined);
      return;
    }
    if (decision.kind === 'received') {
      await trx.updateTable('card_applications').set({ upstream_outcome: 'accepted', check_count: checks, next_check_at: null, updated_at: now })
        .where('id', '=', app.id).execute();
      return;
    }
    await trx.updateTable('card_applications').set({ check_count: checks, next_check_at: nextCheck(ctx, checks, now) }).where('id', '=', app.id).execute();
    if (decision.kind === 'wait' && decision.unknownStatus !== undefined) await alertApplicationUnknownStatus(trx, locked, decision.unknownStatus);
    if (checks === reconcileStalledAfterChecks) {
      await raiseAlert(trx, {
        kind: 'upstream.reconciliation_stalled', merchantId: app.merchant_id, environment: app.environment, object: 'card_application', objectId: app.id,
        message: `Card application ${app.id}: the issuer's answer to its submission is still unknown after ${checks} status queries; the opening fee stays frozen.`,
      });
    }
  });
}

export const applicationReconcileProcess: TimedProcess = {
  name: applicationReconcileName,
  async nextDue(db, scope) {
    const row = await openApplications(db, scope).select(sql<Date | null>`min(next_check_at)`.as('due')).executeTakeFirst();
    return row?.due ? new Date(row.due) : null;
  },
  async runDue(ctx, scope, now) {
    const due = await openApplications(ctx.db, scope).selectAll().where('next_check_at', '<=', now)
      .orderBy('next_check_at').limit(reconcileBatchMax).execute();
    for (const app of due) {
      try {
        await reconcileApplication(ctx, app, now);
      } catch (err) {
        reportFailure(ctx, { job: applicationReconcileName, attempt: app.check_count + 1 }, err, `card application ${app.id}: reconciliation failed; retried later`);
        // Its next check moves on, so that a failing row does not hold the clock (the TimedProcess contract).
        await ctx.db.updateTable('card_applications').set({ next_check_at: nextCheck(ctx, app.check_count + 1, now) })
          .where('id', '=', app.id).where('next_check_at', '<=', now).execute();
      }
    }
  },
};

// ---------------------------------------------------------------------------------------------
// Merchant rules

/** Unconfirmed rule sets of the scope's cards. */
const openRuleSets = (db: Db, scope: ClockScope) => db.selectFrom('card_merchant_rules')
  .innerJoin('cards', 'cards.id', 'card_merchant_rules.card_id')
  .where('cards.merchant_id', '=', scope.merchantId).where('cards.environment', '=', scope.environment)
  .where('card_merchant_rules.synced', '=', false).where('card_merchant_rules.next_check_at', 'is not', null);

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
  const answer = await withDeadline(ctx.config.upstreamCallTimeoutMs, () => ctx.upstreams.card.status(call, open.request_id));
  const ageMs = now.getTime() - new Date(open.updated_at).getTime();
  let decision: RulesReconcileDecision = rulesQueryDecision(answer, ageMs, ctx.config.upstreamNotFoundGraceMs);
  if (decision.kind === 'repush') {
    const row = await ctx.db.selectFrom('card_merchant_rules').selectAll().where('card_id', '=', open.card_id).executeTakeFirstOrThrow();
    if (row.request_id !== open.request_id || row.synced) return;
    const set = storedRuleSet(row);
    const outcome = await withDeadline(ctx.config.upstreamCallTimeoutMs, () => ctx.upstreams.card.setMerchantRules(call, {
      requestId: open.request_id, cardRef: open.upstream_ref,
      rules: set ? { ruleType: set.rule_type, merchantNames: set.merchant_names, mccList: set.mcc_list } : null,
    }));
    decision = rulesCallDecision(outcome);
  }
  await ctx.db.transaction().execute(async (trx) => {
    const row = await trx.selectFrom('card_merchant_rules').selectAll().where('card_id', '=', open.card_id).forUpdate().executeTakeFirst();
    // Settled meanwhile, or replaced by a later request (which reconciles on its own).
    if (!row || row.synced || row.request_id !== open.request_id) return;
    if (decision.kind === 'confirm') return confirmRules(trx, row.card_id, storedRuleSet(row), now);
    if (decision.kind === 'refused') return restoreConfirmedRules(trx, row.card_id, row.confirmed, now);
    const checks = row.check_count + 1;
    await trx.updateTable('card_merchant_rules').set({ check_count: checks, next_check_at: nextCheck(ctx, checks, now) })
      .where('card_id', '=', row.card_id).execute();
    if (checks === reconcileStalledAfterChecks) {
      await raiseAlert(trx, {
        kind: 'upstream.reconciliation_stalled', merchantId: open.merchant_id, environment: open.environment, object: 'card', objectId: row.card_id,
        message: `Card ${row.card_id}: its merchant rules are still unconfirmed by the issuer after ${checks} status queries.`,
      });
    }
  });
}

export const rulesReconcileProcess: TimedProcess = {
  name: rulesReconcileName,
  async nextDue(db, scope) {
    const row = await openRuleSets(db, scope).select(sql<Date | null>`min(card_merchant_rules.next_check_at)`.as('due')).executeTakeFirst();
    return row?.due ? new Date(row.due) : null;
  },
  async runDue(ctx, scope, now) {
    const due = await openRuleSets(ctx.db, scope)
      .select(['card_merchant_rules.card_id', 'card_merchant_rules.request_id', 'card_merchant_rules.check_count', 'card_merchant_rules.updated_at',
        'cards.upstream_ref', 'cards.merchant_id', 'cards.environment'])
      .where('card_merchant_rules.next_check_at', '<=', now).orderBy('card_merchant_rules.next_check_at').limit(reconcileBatchMax).execute();
    for (const open of due) {
      try {
        await reconcileRuleSet(ctx, open, now);
      } catch (err) {
        reportFailure(ctx, { job: rulesReconcileName, attempt: open.check_count + 1 }, err, `card ${open.card_id}: merchant-rules reconciliation failed; retried later`);
        await ctx.db.updateTable('card_merchant_rules').set({ next_check_at: nextCheck(ctx, open.check_count + 1, now) })
          .where('card_id', '=', open.card_id).where('next_check_at', '<=', now).execute();
      }
    }
  },
};

/** The card area's reconciliation processes (src/background.ts lists them among the timed processes). */
export const cardReconcileTimedProcesses: TimedProcess[] = [applicationReconcileProcess, rulesReconcileProcess];

/**
 * The scopes with a check due on their own clock, the longest overdue first (a bound on them per
 * tick): a bound over every scope with something open (a check not yet due, a rule set still in
 * its claim's lease) could leave due ones out tick after tick, and so could a bound over due ones
 * in no particular order while more than the bound stay due.
 */
export function dueReconcileScopes(db: Kysely<Database>) {
  const applicationNow = scopeNowSql(sql.ref('card_applications.merchant_id'), sql.ref('card_applications.environment'));
  const cardNow = scopeNowSql(sql.ref('cards.merchant_id'), sql.ref('cards.environment'));
  const applications = db.selectFrom('card_applications')
    .select(['merchant_id', 'environment', sql<Date>`next_check_at - ${applicationNow}`.as('ahead')])
    .where('status', '=', 'pending').where('upstream_outcome', '<>', 'accepted').where('next_check_at', 'is not', null)
    .where(sql<boolean>`next_check_at <= ${applicationNow}`);
  const ruleSets = db.selectFrom('card_merchant_rules').innerJoin('cards', 'cards.id', 'card_merchant_rules.card_id')
    .select(['cards.merchant_id', 'cards.environment', sql<Date>`card_merchant_rules.next_check_at - ${cardNow}`.as('ahead')])
    .where('card_merchant_rules.synced', '=', false).where('card_merchant_rules.next_check_at', 'is not', null)
    .where(sql<boolean>`card_merchant_rules.next_check_at <= ${cardNow}`);
  return longestOverdueScopes(db, applications.unionAll(ruleSets));
}

/**
 * The same processes on each scope's own clock, for the service running on its own (not only on a
 * sandbox advance): every scope with a check due.
 */
export const cardReconcileTickers: Ticker[] = [{
  name: 'card.reconcile',
  intervalMs: 5_000,
  async run(ctx) {
    const scopes = await dueReconcileScopes(ctx.db);
    for (const s of scopes) {
      const scope = { merchantId: s.merchant_id, environment: s.environment };
      const now = await ctx.clock.now(ctx.db, scope);
      for (const p of cardReconcileTimedProcesses) {
        const due = await p.nextDue(ctx.db, scope);
        if (due && due.getTime() <= now.getTime()) await p.runDue(ctx, scope, now);
      }
    }
  },
}];
