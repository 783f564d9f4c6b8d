/**
 * Card applications (extensions 10): creation with the KYC gate and the opening fee frozen, the
 * submission to the issuer, supplement sessions, the reads and the sandbox's decisions. The
 * issuer's decisions themselves (approved → card opened and fee charged; rejected → fee refunded;
 * need_docs → a supplement work order; the supplement's expiry) are decisions.ts. docs/cards.md.
 */
import type { Transaction } from 'kysely';
import type { Database } from '../../../db/schema.js';
import type { ServiceContext } from '../../../service-context.js';
import { ApiError, type ErrorCode } from '../../../platform/errors.js';
import { newId } from '../../../platform/ids.js';
import { minorFromDb, postEntryOrRefuse, cardEntryKinds, feeFreezeLines } from '../../../money/index.js';
import { withDeadline } from '../../../upstreams/deadline.js';
import type { ApplicationDecision } from '../../../upstreams/card/port.js';
import { assetScale, getAsset } from '../../assets/index.js';
import { issueTicket, ticketView } from '../../hosted-screens/index.js';
import { raiseAlertOnce } from '../../alerts/index.js';
import { authorisedBins, binAllowed, productBySeq, productSeqOf } from '../products/queries.js';
import { type CardCaller, type Db, type MemberCardCaller } from '../shared/queries.js';
import { nextCheck } from '../shared/reconcile.js';
import { findApplication, insertApplication, updateApplication } from './queries.js';
import { addressProblems, normaliseAddress } from '../shared/rules.js';
import { cardReferenceType, feeInSource } from './rules.js';
import { applicationReceived, applicationTransition, outsideApplicationEnumeration, supplementOpen } from './state.js';
import type { Address } from '../shared/tables.js';
import type { CardApplicationRow } from './tables.js';
import { applicationView } from './views.js';
import { cardKycPasses, decide, emitApplication, eventOf } from './decisions.js';
import { ownerColumns, rowScope } from '../../../db/owned-by.js';

export const applicationErrors = {
  create: ['invalid_request', 'invalid_fields', 'kyc_required', 'product_not_available', 'insufficient_balance'],
  get: ['not_found'],
  supplementSession: ['not_found'],
  advance: ['not_found', 'state_invalid', 'invalid_request'],
} as const satisfies Record<string, readonly ErrorCode[]>;

/** How long the application's key is held while the issuer is asked. */
export const submitLeaseMs = 60_000;

export interface ApplicationInput {
  product_id: string;
  source_asset: string;
  shipping_address?: Address;
}

/** Step 1 of `POST /v1/cards/applications`, committed with the key's claim: the application and the frozen fee. */
export async function createApplication(
  ctx: ServiceContext,
  trx: Transaction<Database>,
  caller: MemberCardCaller,
  input: ApplicationInput,
): Promise<CardApplicationRow> {
  if (!(await cardKycPasses(trx, caller))) throw new ApiError('kyc_required');
  const seq = productSeqOf(input.product_id);
  const product = seq ? await productBySeq(trx, caller.environment, seq) : undefined;
  if (
    !product ||
    !product.enabled ||
    !binAllowed(await authorisedBins(trx, caller.merchantId, caller.environment), product.bin)
  ) {
    throw new ApiError('product_not_available', 'No such card product for this merchant.');
  }
  const sourceAsset = input.source_asset.toUpperCase();
  const asset = await getAsset(trx, sourceAsset);
  if (!product.source_assets.includes(sourceAsset) || !asset || !asset.enabled) {
    throw new ApiError('product_not_available', `The product is not paid in ${sourceAsset}.`);
  }
  let shipping: Address | null = null;
  if (product.form_factor === 'physical') {
    const problems = addressProblems(input.shipping_address, 'shipping_address.');
    if (problems.length > 0)
      throw new ApiError('invalid_fields', 'A physical card needs a shipping address.', {
        fields: problems,
        reason: 'validation_failed',
      });
    shipping = normaliseAddress(input.shipping_address!);
  }
  const fee = feeInSource(minorFromDb(product.opening_fee), await assetScale(trx, product.currency), asset.scale);
  const now = await ctx.clock.now(trx, caller);
  const app = await insertApplication(trx, {
    id: newId('cap'),
    ...ownerColumns(caller),
    product_seq: product.seq,
    source_asset: sourceAsset,
    fee: fee.toString(),
    shipping_address: shipping ? JSON.stringify(shipping) : null,
    status: 'pending',
    status_version: 1,
    upstream_outcome: 'none',
    upstream_ref: null,
    supplement_status: null,
    supplement_expires_at: null,
    card_id: null,
    failure_reason: null,
    created_at: now,
    updated_at: now,
    // Reconciliation takes it up if the submission never records an answer (a crash mid-call).
    next_check_at: new Date(now.getTime() + submitLeaseMs),
  });
  if (fee > 0n) {
    await postEntryOrRefuse(trx, {
      environment: caller.environment,
      merchantId: caller.merchantId,
      kind: cardEntryKinds.feeFreeze,
      referenceType: cardReferenceType,
      referenceId: app.id,
      asset: sourceAsset,
      lines: feeFreezeLines({ memberId: caller.memberId, merchantId: caller.merchantId, fee }),
    });
  }
  await emitApplication(trx, app);
  return app;
}

/**
 * Step 2, after the claim committed: the issuer is asked. Accepted: the application waits for the
 * issuer's decision. Refused: rejected at once, fee refunded. No answer (timeout, 5xx): the
 * outcome is unknown; nothing is refunded, the application stays `pending`.
 */
export async function submitToIssuer(ctx: ServiceContext, app: CardApplicationRow) {
  const product = (await productBySeq(ctx.db, app.environment, app.product_seq))!;
  const call = rowScope(app);
  const outcome = await withDeadline(ctx.config.upstreamCallTimeoutMs, () =>
    ctx.upstreams.card.submitApplication(call, {
      requestId: app.id,
      bin: product.bin,
      formFactor: product.form_factor,
    }),
  );
  const row = await ctx.db.transaction().execute(async (trx) => {
    const now = await ctx.clock.now(trx, call);
    const locked = (await findApplication(trx, call, app.id, true))!;
    if (locked.status !== 'pending' || locked.upstream_outcome === 'accepted') return locked;
    if (outcome.kind === 'accepted' && applicationReceived(outcome.status)) {
      return updateApplication(trx, app.id, {
        upstream_outcome: 'accepted',
        upstream_ref: outcome.providerOrderId,
        next_check_at: null,
        updated_at: now,
      });
    }
    if (outcome.kind === 'rejected') return (await decide(ctx, trx, locked, 'rejected')) ?? locked;
    // Outcome unknown (timeout, 5xx, or an acceptance whose status does not say "received"):
    // reconciliation asks the issuer (reconcile.ts); nothing is refunded on it. A status outside
    // our enumeration is also an operator alert (the application is held as suspended).
    if (outcome.kind === 'accepted' && outsideApplicationEnumeration(outcome.status))
      await alertApplicationUnknownStatus(trx, locked, outcome.status);
    return updateApplication(trx, app.id, {
      upstream_outcome: 'unknown',
      next_check_at: nextCheck(ctx, 1, now),
      updated_at: now,
      ...(outcome.kind === 'accepted' ? { upstream_ref: outcome.providerOrderId } : {}),
    });
  });
  return applicationView(ctx.db, row);
}

/** One `upstream.unknown_status` alert per application while open: the issuer answered it with a status outside our
 * enumeration. */
export async function alertApplicationUnknownStatus(trx: Db, app: CardApplicationRow, status: string): Promise<void> {
  await raiseAlertOnce(trx, {
    kind: 'upstream.unknown_status',
    merchantId: app.merchant_id,
    environment: app.environment,
    object: 'card_application',
    objectId: app.id,
    message:
      `Card application ${app.id}: the issuer answered with a status outside our enumeration (${status}); it ` +
      `stays pending with the opening fee frozen until the issuer's decision is known.`,
  });
}

export async function getApplication(db: Db, caller: CardCaller, id: string) {
  const app = await findApplication(db, caller, id);
  if (!app) throw new ApiError('not_found', 'No such card application.');
  return applicationView(db, app);
}

/** `POST /v1/cards/applications/{id}/supplement-sessions`: a ticket for the pending work order, else one 404. */
export async function supplementSession(
  ctx: ServiceContext,
  trx: Transaction<Database>,
  caller: MemberCardCaller,
  id: string,
  origin: string,
) {
  const app = await findApplication(trx, caller, id, true);
  if (!app || !supplementOpen(app, await ctx.clock.now(trx, caller)))
    throw new ApiError('not_found', 'No pending supplement for this application.');
  const ticket = await issueTicket(ctx, trx, {
    merchantId: caller.merchantId,
    environment: caller.environment,
    memberId: caller.memberId,
    purpose: 'card_supplement',
    origin,
    subjectId: app.id,
  });
  return ticketView(ticket);
}

/** Sandbox: `POST /v1/sandbox/cards/applications/{id}/advance` (extensions 8): the issuer decides. */
export async function sandboxAdvance(ctx: ServiceContext, caller: CardCaller, id: string, to: ApplicationDecision) {
  const app = await findApplication(ctx.db, caller, id);
  if (!app) throw new ApiError('not_found', 'No such card application.');
  const decideUpstream = ctx.upstreams.card.sandboxDecide;
  if (!decideUpstream) throw new ApiError('state_invalid', 'The card issuer in use has no sandbox decisions.');
  const call = rowScope(app);
  // Validate against the state machine before the issuer is asked (a refused move changes nothing there either).
  const pre = applicationTransition(app.status, eventOf[to], app.supplement_status === 'pending');
  if (pre.kind === 'refuse') throw new ApiError(pre.code, pre.reason);
  const outcome = await decideUpstream.call(ctx.upstreams.card, call, app.id, to);
  if (outcome.kind === 'not_found') throw new ApiError('state_invalid', 'The issuer never received this application.');
  const row = await ctx.db.transaction().execute(async (trx) => {
    // The merchant's clock is read first, as it always was here (its statement keeps its place).
    await ctx.clock.now(trx, call);
    const locked = (await findApplication(trx, call, app.id, true))!;
    return (await decide(ctx, trx, locked, to, outcome.card)) ?? locked;
  });
  return applicationView(ctx.db, row);
}
