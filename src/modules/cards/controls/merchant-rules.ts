/**
 * A card's merchant rules (docs/cards.md): the stored set, its replacement or removal through a
 * synchronous issuer call (prepare with the key's claim, finish with the call), and what the
 * reconciliation (reconcile.ts) applies when the issuer's answer comes late.
 */
import { rowScope } from '../../../db/owned-by.js';
import type { Transaction } from 'kysely';
import type { Database } from '../../../db/schema.js';
import type { ServiceContext } from '../../../service-context.js';
import { ApiError, invalidFields } from '../../../platform/errors.js';
import { withDeadline } from '../../../upstreams/deadline.js';
import { cardOrNotFound } from '../cards/queries.js';
import { type Db, type MemberCardCaller } from '../shared/queries.js';
import type { CardRow } from '../cards/tables.js';
import { merchantRuleProblems } from './rules.js';
import type { MerchantRuleSet } from './tables.js';
import {
  confirmRules,
  insertMerchantRules,
  lockMerchantRules,
  lockMerchantRulesRow,
  merchantRulesOfCard,
  restoreConfirmedRules,
  updateMerchantRules,
} from './queries.js';
import { confirmedOrUnknown, controlLeaseMs, memberCard, productOf, requestIdFor, terminal } from './issuer-calls.js';

import { isoOrNull } from '../../../platform/dates.js';

export interface MerchantRulesBody {
  rule_type: string;
  merchant_names?: string[];
  mcc_list?: string[];
}

export interface MerchantRulesView {
  id: string;
  rule_type: 'white' | 'black' | null;
  merchant_names: string[];
  mcc_list: string[];
  synced: boolean;
  synced_at: string | null;
}

const noRules = (cardId: string): MerchantRulesView => ({
  id: cardId,
  rule_type: null,
  merchant_names: [],
  mcc_list: [],
  synced: true,
  synced_at: null,
});

export async function getMerchantRules(db: Db, caller: MemberCardCaller, id: string): Promise<MerchantRulesView> {
  const card = await cardOrNotFound(db, caller, id);
  const row = await merchantRulesOfCard(db, card.id);
  if (!row) return noRules(card.id);
  return {
    id: card.id,
    rule_type: row.rule_type,
    merchant_names: row.merchant_names,
    mcc_list: row.mcc_list,
    synced: row.synced,
    synced_at: isoOrNull(row.synced_at),
  };
}

export interface PreparedRules {
  card: CardRow;
  rules: MerchantRuleSet | null;
  requestId: string;
}

/**
 * `PUT` (rules) and `DELETE` (null) of the merchant rules, step 1, committed with the key's claim:
 * the checks, then the requested set stored as the baseline, unconfirmed (`synced: false`), with
 * the set the issuer last confirmed kept beside it.
 */
export async function prepareMerchantRules(
  ctx: ServiceContext,
  trx: Transaction<Database>,
  caller: MemberCardCaller,
  id: string,
  body: MerchantRulesBody | null,
  key: string,
): Promise<PreparedRules> {
  const card = await memberCard(trx, caller, id);
  if (terminal.has(card.status)) throw new ApiError('state_invalid', `The card is ${card.status}.`);
  const product = await productOf(trx, card);
  if (!product.enabled || !product.card_lists_supported)
    throw new ApiError('product_not_available', "The card's product does not support card-level merchant lists.");
  let rules: MerchantRuleSet | null = null;
  if (body) {
    const problems = merchantRuleProblems(body);
    if (problems.length > 0) throw invalidFields(problems);
    rules = {
      rule_type: body.rule_type as 'white' | 'black',
      merchant_names: [...new Set((body.merchant_names ?? []).map((n) => n.trim()))],
      mcc_list: [...new Set(body.mcc_list ?? [])],
    };
  }
  const now = await ctx.clock.now(trx, caller);
  const requestId = requestIdFor(body ? 'rules' : 'rules-delete', card, key, rules);
  const existing = await lockMerchantRules(trx, card.id);
  const confirmed = existing ? (existing.synced ? setOf(existing) : existing.confirmed) : null;
  const values = {
    rule_type: rules?.rule_type ?? null,
    merchant_names: JSON.stringify(rules?.merchant_names ?? []),
    mcc_list: JSON.stringify(rules?.mcc_list ?? []),
    synced: false,
    synced_at: existing?.synced_at ?? null,
    request_id: requestId,
    confirmed: confirmed ? JSON.stringify(confirmed) : null,
    updated_at: now,
    // Left unconfirmed (a 502 and no retry: an unowned key), reconciliation asks the issuer once the claim's lease is
    // past.
    check_count: 0,
    next_check_at: new Date(now.getTime() + controlLeaseMs),
  };
  if (existing) await updateMerchantRules(trx, card.id, values);
  else await insertMerchantRules(trx, { card_id: card.id, ...values });
  return { card, rules, requestId };
}

function setOf(row: {
  rule_type: 'white' | 'black' | null;
  merchant_names: string[];
  mcc_list: string[];
}): MerchantRuleSet | null {
  return row.rule_type === null
    ? null
    : { rule_type: row.rule_type, merchant_names: row.merchant_names, mcc_list: row.mcc_list };
}

/**
 * Step 2: the issuer replaces the set. Confirmed → `synced: true` with `synced_at`. Refused →
 * the confirmed set comes back and `invalid_request`. Timeout or 5xx → 502 `upstream_error`: the
 * requested set stays stored as the baseline, unconfirmed; a retry with the same key asks again.
 */
export async function finishMerchantRules(ctx: ServiceContext, p: PreparedRules): Promise<MerchantRulesView> {
  const call = rowScope(p.card);
  const outcome = await withDeadline(ctx.config.upstreamCallTimeoutMs, () =>
    ctx.upstreams.card.setMerchantRules(call, {
      requestId: p.requestId,
      cardRef: p.card.upstream_ref,
      rules: p.rules
        ? { ruleType: p.rules.rule_type, merchantNames: p.rules.merchant_names, mccList: p.rules.mcc_list }
        : null,
    }),
  );
  await confirmedOrUnknown(
    ctx,
    p.card,
    'merchant rules',
    outcome,
    "The card issuer's answer is unknown; the rules are stored unconfirmed. Retry with the same key, then " +
      'read the rules.',
  );
  const answer = await ctx.db.transaction().execute(async (trx): Promise<MerchantRulesView | 'refused'> => {
    const row = await lockMerchantRulesRow(trx, p.card.id);
    const now = await ctx.clock.now(trx, call);
    if (row.request_id !== p.requestId) {
      // A later request replaced the baseline meanwhile: it answers for the current state.
      if (outcome.kind === 'rejected') return 'refused';
      return getMerchantRules(trx, { ...call, memberId: p.card.member_id }, p.card.id);
    }
    if (outcome.kind === 'rejected') {
      await restoreConfirmedRules(trx, p.card.id, row.confirmed, now);
      return 'refused';
    }
    await confirmRules(trx, p.card.id, p.rules, now);
    if (!p.rules) return { ...noRules(p.card.id), synced_at: now.toISOString() };
    return { id: p.card.id, ...p.rules, synced: true, synced_at: now.toISOString() };
  });
  if (answer === 'refused') throw new ApiError('invalid_request', 'The card issuer refused the rules.');
  return answer;
}

/** The stored (requested) set of a rules row, null when it is a removal. */
export function storedRuleSet(row: {
  rule_type: 'white' | 'black' | null;
  merchant_names: string[];
  mcc_list: string[];
}): MerchantRuleSet | null {
  return setOf(row);
}
