import { randomUUID } from 'node:crypto';
import type { AppInstance } from '../../platform/http-app.js';
import type { ServiceContext } from '../../service-context.js';
import { PageQuery, listEnvelope } from '../../platform/pagination.js';
import { router } from '../../platform/route.js';
import { hostedOrigin } from '../hosted-screens/rules.js';
import { stepUpCall, stepUpErrors } from '../step-up/service.js';
import {
  applicationErrors, createApplication, getApplication, sandboxAdvance, submitLeaseMs, submitToIssuer, supplementSession,
} from './applications/service.js';
import { activationLeaseMs, cardErrors, finishActivation, getCard, listCards, prepareActivation, sandboxShip } from './cards/service.js';
import { listProducts } from './products/service.js';
import { revealErrors, secureSession } from './cards/reveal.js';
import {
  controlErrors, controlLeaseMs, finishBillingAddress, finishCvvUnblock, finishMerchantRules, getMerchantRules, prepareBillingAddress,
  prepareCvvUnblock, prepareMerchantRules, setLimits,
} from './controls/service.js';
import {
  ActivateBody, AdvanceBody, ApplicationBody, BillingAddressBody, Card, CardApplication, CardProduct, IdParams, LimitsBody, MerchantRules,
  MerchantRulesBody, Ticket, AddressSchema,
} from './schemas.js';
import { Type } from 'typebox';

const tags = ['Cards'];

/** Card issuing I (docs/cards.md): products, applications and their supplement, the card record, activation. */
export async function cardRoutes(app: AppInstance, ctx: ServiceContext): Promise<void> {
  const { db } = ctx;
  const route = router(app, ctx);

  route.get('/v1/cards/products', {
    access: { scope: 'cards:read', principal: 'merchant' },
    schema: {
      operationId: 'listCardProducts',
      summary: 'List card products',
      description: 'Enabled products the merchant may issue: all BINs when the merchant has no BIN authorisation rows, otherwise only the authorised BINs. Never paged.',
      tags,
      response: { 200: listEnvelope(CardProduct) },
    },
  }, async ({ principal }) => listProducts(db, principal.merchantId, principal.environment));

  route.post('/v1/cards/applications', {
    access: { scope: 'cards:write', principal: 'member', idempotency: 'required' },
    errors: [...applicationErrors.create],
    schema: {
      operationId: 'createCardApplication',
      summary: 'Apply for a card',
      description: [
        'Signed. Checks the member\'s KYC level (`card_issuing`), the product (`product_not_available`: unknown, disabled, BIN not authorised, or `source_asset` not in its list) and, for a physical card, `shipping_address` (`invalid_fields`). ',
        'The opening fee is frozen in `source_asset` (available → frozen; `insufficient_balance`), then the issuer is asked. The answer is `pending` while the issuer reviews, or `rejected` (fee refunded) when it refuses at once. ',
        'Later: `approved` (fee charged; card opened, `unactivated` when physical, `active` when virtual; `card_id` set), `rejected`, or `need_docs` with a supplement work order (`supplement.status` `pending`; see the supplement-sessions call); a work order that expires fails the application and refunds the fee. ',
        'A timeout or 5xx of the issuer leaves the application `pending` and the fee frozen (never refunded on an unknown outcome) until reconciliation learns the issuer\'s state: its decision is applied as above; an application it never received is submitted again.',
      ].join(''),
      tags,
      body: ApplicationBody,
      response: { 201: CardApplication },
    },
  }, async ({ principal, body, claim, replay }) => {
    const outcome = await claim(submitLeaseMs, (trx) => createApplication(ctx, trx, principal, body));
    if ('replay' in outcome) return replay(outcome.replay);
    return submitToIssuer(ctx, outcome.value);
  });

  route.get('/v1/cards/applications/:id', {
    access: { scope: 'cards:read', principal: 'either' },
    errors: [...applicationErrors.get],
    schema: { operationId: 'getCardApplication', summary: 'Get a card application', description: 'On behalf of a member, only its own. `cap_` prefix optional.', tags, params: IdParams, response: { 200: CardApplication } },
  }, async ({ principal, params }) => getApplication(db, principal, params.id));

  route.post('/v1/cards/applications/:id/supplement-sessions', {
    access: { scope: 'cards:write', principal: 'member', idempotency: 'required' },
    errors: [...applicationErrors.supplementSession],
    schema: {
      operationId: 'createCardSupplementSession',
      summary: 'Open the card supplement screen',
      description: 'A one-time hosted-screen link (24 hours, bound to the member and the work order, void after a successful submission) on which the member re-uploads identity photos. Name, birth date, document number and address cannot be changed there. 404 `not_found` when the application is missing, not this member\'s, or has no pending work order. `cap_` prefix optional.',
      tags,
      params: IdParams,
      response: { 201: Ticket },
    },
  }, async ({ principal, params, req, write }) => write((trx) => supplementSession(ctx, trx, principal, params.id, hostedOrigin(req))));

  route.get('/v1/cards', {
    access: { scope: 'cards:read', principal: 'member' },
    schema: { operationId: 'listCards', summary: 'List the member\'s cards', tags, querystring: PageQuery, response: { 200: listEnvelope(Card) } },
  }, async ({ principal, query }) => listCards(db, principal, query));

  route.get('/v1/cards/:id', {
    access: { scope: 'cards:read', principal: 'either' },
    errors: [...cardErrors.get],
    schema: { operationId: 'getCard', summary: 'Get a card', description: 'The full record; never the card number or the CVV. `crd_` prefix optional.', tags, params: IdParams, response: { 200: Card } },
  }, async ({ principal, params }) => getCard(db, principal, params.id));

  route.post('/v1/cards/:id/activate', {
    access: { scope: 'cards:write', principal: 'member', idempotency: 'required', secretBodyFields: ['pin'] },
    errors: [...cardErrors.activate, ...stepUpErrors],
    schema: {
      operationId: 'activateCard',
      summary: 'Activate a physical card',
      description: [
        'Irreversible; protected by step-up (bound to the member and this card, 300 s, single use): the first call answers `step_up_required`; repeat with the same key and body and `x-step-up`. ',
        'The issuer checks `expiry` and `pin`; the PIN is never stored or logged (the idempotency record keeps only a keyed digest of it). ',
        'A mismatch answers `invalid_request` and is counted; the third counted failure locks the card for 24 hours (`state_invalid` with `locked_until`); issuer timeouts (504) and 5xx (502) are not counted. ',
        'After a 504/502 the outcome is unknown: retry the same request (same key, same body, the same `x-step-up`) within 24 hours; it passes with the challenge it already used, the issuer\'s state is asked first, and the member is not asked again. Any other request needs a new challenge. ',
        'A repeat on an `active` card answers 200 without step-up and is not counted. Virtual cards: `product_not_available`; a card not `unactivated`, locked, or not yet shipped: `state_invalid`.',
      ].join(''),
      tags,
      params: IdParams,
      body: ActivateBody,
      response: { 200: Type.Object({ id: Type.String(), status: Type.Literal('active') }) },
    },
  }, async ({ principal, params, body, claim, replay, req, idempotency }) => {
    const attempt = { key: idempotency.key, requestHash: idempotency.requestHash };
    const outcome = await claim(activationLeaseMs, (trx) => prepareActivation(ctx, trx, principal, params.id, stepUpCall(req), attempt));
    if ('replay' in outcome) return replay(outcome.replay);
    if (outcome.value.kind === 'already') return { id: outcome.value.id, status: 'active' as const };
    return finishActivation(ctx, outcome.value.card, body, outcome.value.resumed);
  });

  route.patch('/v1/cards/:id/limits', {
    access: { scope: 'cards:write', principal: 'member', idempotency: 'optional' },
    errors: [...controlErrors.limits],
    schema: {
      operationId: 'updateCardLimits',
      summary: 'Set a card\'s limits',
      description: [
        'User limits in the card currency; each omitted field keeps its value; `0` means no limit at that layer (not block-all). ',
        'Each non-zero value at least one whole currency unit and not above the product\'s cap; single ≤ daily ≤ monthly among the non-zero values (`invalid_fields`, without a `fields` array). ',
        'Card `closed`, `closing`, `expired` or `replaced`: `state_invalid`. A malformed amount or too many decimal places: `invalid_request` (the reference says 500; extensions 6). ',
        '200 means recorded: the limits are pushed to the issuer afterwards (`limits_sync` on the card); when the push fails only tightening takes effect (a failed loosening keeps the old value).',
      ].join(''),
      tags,
      params: IdParams,
      body: LimitsBody,
      response: { 200: Type.Object({ id: Type.String(), accepted: Type.Literal(true) }) },
    },
  }, async ({ principal, params, body, write }) => write((trx) => setLimits(ctx, trx, principal, params.id, body)));

  route.get('/v1/cards/:id/merchant-rules', {
    access: { scope: 'cards:read', principal: 'member' },
    errors: [...controlErrors.getMerchantRules],
    schema: {
      operationId: 'getCardMerchantRules',
      summary: 'Get a card\'s merchant rules',
      description: 'The stored set; `synced: false` while the issuer has not confirmed it (after a 502 the requested set is the stored baseline, until a retry or reconciliation settles it). No rules: `rule_type` null and empty lists.',
      tags, params: IdParams, response: { 200: MerchantRules },
    },
  }, async ({ principal, params }) => getMerchantRules(db, principal, params.id));

  route.put('/v1/cards/:id/merchant-rules', {
    access: { scope: 'cards:write', principal: 'member', idempotency: 'required' },
    errors: [...controlErrors.merchantRules],
    schema: {
      operationId: 'setCardMerchantRules',
      summary: 'Replace a card\'s merchant rules',
      description: [
        'Replaces the whole set (not an append); DELETE removes it. `rule_type` `white` or `black`; up to 200 `merchant_names` and 200 four-digit `mcc_list` codes, not both empty (`invalid_fields` with `fields`). ',
        'Card `closed`, `expired` or `replaced`: `state_invalid`; product without card-level lists: `product_not_available`; the issuer refused: `invalid_request` (the confirmed set stays). ',
        '200 when the issuer confirmed (`synced: true`). 502 `upstream_error`: the outcome is unknown; the requested set is stored as the baseline, unconfirmed (`synced: false`); retry with the same key. Left alone (or abandoned for a new key), the set is reconciled with the issuer: it becomes `synced: true` when the issuer holds it, the confirmed set comes back when it refused it, and it is pushed again when the issuer never received it.',
      ].join(''),
      tags, params: IdParams, body: MerchantRulesBody, response: { 200: MerchantRules },
    },
  }, async ({ principal, params, body, claim, replay, idempotency }) => {
    const outcome = await claim(controlLeaseMs, (trx) => prepareMerchantRules(ctx, trx, principal, params.id, body, idempotency.key));
    if ('replay' in outcome) return replay(outcome.replay);
    return finishMerchantRules(ctx, outcome.value);
  });

  // The reference: deletes are naturally idempotent and need no key. A key, when sent, is kept as
  // on every write (replay, retry of a 502 with the same issuer request id); without one each
  // request asks the issuer under a request id of its own.
  route.delete('/v1/cards/:id/merchant-rules', {
    access: { scope: 'cards:write', principal: 'member', idempotency: 'optional' },
    errors: [...controlErrors.merchantRules.filter((c) => c !== 'invalid_fields')],
    schema: {
      operationId: 'deleteCardMerchantRules',
      summary: 'Remove a card\'s merchant rules',
      description: 'Removes every restriction. Naturally idempotent: `x-idempotency-key` is optional (with one, a 502 is retried with the same key). Same preconditions and answers as PUT; 200 answers the empty set (`rule_type` null) confirmed by the issuer.',
      tags, params: IdParams, response: { 200: MerchantRules },
    },
  }, async ({ principal, params, claim, replay, idempotency }) => {
    const outcome = await claim(controlLeaseMs, (trx) => prepareMerchantRules(ctx, trx, principal, params.id, null, idempotency?.key ?? randomUUID()));
    if ('replay' in outcome) return replay(outcome.replay);
    return finishMerchantRules(ctx, outcome.value);
  });

  route.patch('/v1/cards/:id/billing-address', {
    access: { scope: 'cards:write', principal: 'member', idempotency: 'required' },
    errors: [...controlErrors.billingAddress],
    schema: {
      operationId: 'updateCardBillingAddress',
      summary: 'Change a card\'s billing address',
      description: [
        'Synchronous: 200 means the issuer confirmed (then the address is stored). Missing required field or bad country: `invalid_fields` with `fields`; ',
        'card `closed`, `expired` or `replaced`: `state_invalid`; the BIN does not allow the change: `product_not_available`; the issuer refused the address: `invalid_request`. ',
        '502 `upstream_error`: outcome unknown, the new address is not stored; retry with the same key, then read the card.',
      ].join(''),
      tags, params: IdParams, body: BillingAddressBody,
      response: { 200: Type.Object({ id: Type.String(), billing_address: AddressSchema }) },
    },
  }, async ({ principal, params, body, claim, replay, idempotency }) => {
    const outcome = await claim(controlLeaseMs, (trx) => prepareBillingAddress(trx, principal, params.id, body, idempotency.key));
    if ('replay' in outcome) return replay(outcome.replay);
    return finishBillingAddress(ctx, outcome.value);
  });

  route.post('/v1/cards/:id/cvv/unblock', {
    access: { scope: 'cards:write', principal: 'member', idempotency: 'required' },
    errors: [...controlErrors.cvvUnblock],
    schema: {
      operationId: 'unblockCardCvv',
      summary: 'Unlock a card\'s CVV',
      description: 'Lifts the issuer\'s CVV lock; no strong authentication. Limited to 5 calls per member per hour (sliding hour; 429 `rate_limited` with `Retry-After`). The answer only says it was unlocked: read `cvv_blocked` from the card. `crd_` prefix optional.',
      tags, params: IdParams, response: { 200: Type.Object({ unblocked: Type.Literal(true) }) },
    },
  }, async ({ principal, params, claim, replay, idempotency }) => {
    const outcome = await claim(controlLeaseMs, (trx) => prepareCvvUnblock(ctx, trx, principal, params.id, idempotency.key));
    if ('replay' in outcome) return replay(outcome.replay);
    return finishCvvUnblock(ctx, outcome.value);
  });

  route.post('/v1/cards/:id/secure-session', {
    access: { scope: 'cards:secure', principal: 'member', idempotency: 'required' },
    errors: [...revealErrors.session],
    schema: {
      operationId: 'createCardSecureSession',
      summary: 'Open the card reveal screen',
      description: 'Scope `cards:secure` (restricted: waits for approval on production keys). A one-time hosted-screen link (300 seconds, single use, bound to the member and this card) on which the member sees the card number, expiry and CVV, fetched from the issuer at that moment. None of them ever passes through this API, the service\'s logs or its storage. Card `closed`, `expired` or `replaced`: `state_invalid`. `crd_` prefix optional.',
      tags, params: IdParams, response: { 201: Ticket },
    },
  }, async ({ principal, params, req, write }) => write((trx) => secureSession(ctx, trx, principal, params.id, hostedOrigin(req))));

  route.post('/v1/sandbox/cards/applications/:id/advance', {
    access: { scope: 'merchant:read', principal: 'merchant', idempotency: 'required', sandboxOnly: true },
    errors: [...applicationErrors.advance],
    schema: {
      operationId: 'advanceSandboxCardApplication',
      summary: 'Sandbox: the issuer decides a card application',
      description: '`need_docs` (from `pending`: a supplement work order), `approved` (from `pending`: card opened, fee charged) or `rejected` (from `pending`: fee refunded). A repeat of the decision answers the application.',
      tags: ['Sandbox'],
      params: IdParams,
      body: AdvanceBody,
      response: { 200: CardApplication },
    },
  }, async ({ principal, params, body, once }) => once(() => sandboxAdvance(ctx, principal, params.id, body.to)));

  route.post('/v1/sandbox/cards/:id/ship', {
    access: { scope: 'merchant:read', principal: 'merchant', idempotency: 'required', sandboxOnly: true },
    errors: [...cardErrors.ship],
    schema: { operationId: 'shipSandboxCard', summary: 'Sandbox: a physical card is shipped', description: 'Its inventory row becomes `shipped`.', tags: ['Sandbox'], params: IdParams, response: { 200: Card } },
  }, async ({ principal, params, once }) => once(() => sandboxShip(ctx, principal, params.id)));
}
