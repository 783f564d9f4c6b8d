import { randomUUID } from 'node:crypto';
import { Type } from 'typebox';
import { cardRead, claimThen, memberWrite, type CardRoute } from '../shared/routes.js';
import { AddressSchema } from '../shared/schemas.js';
import { BillingAddressBody, LimitsBody, MerchantRules, MerchantRulesBody } from './schemas.js';
import {
  controlErrors,
  finishBillingAddress,
  finishCvvUnblock,
  prepareBillingAddress,
  prepareCvvUnblock,
} from './service.js';
import { controlLeaseMs } from './issuer-calls.js';
import { setLimits } from './limits.js';
import { finishMerchantRules, getMerchantRules, prepareMerchantRules } from './merchant-rules.js';

/**
 * Card control routes (docs/cards.md): limits, merchant rules, billing address, CVV unlock; the area's index.ts
 * registers them in the order of the OpenAPI document. The writes the issuer confirms at once commit a claim on
 * the key, then ask the issuer (`claimThen`).
 */
export const controlRoutes = {
  setLimits: (route, ctx) =>
    route.patch(
      '/v1/cards/:id/limits',
      memberWrite({
        idempotency: 'optional',
        errors: controlErrors.limits,
        operationId: 'updateCardLimits',
        summary: "Set a card's limits",
        description: [
          'User limits in the card currency; each omitted field keeps its value; `0` means no limit at ' +
            'that layer (not block-all). ',
          "Each non-zero value at least one whole currency unit and not above the product's cap; single " +
            '≤ daily ≤ monthly among the non-zero values (`invalid_fields`, without a `fields` array). ',
          'Card `closed`, `closing`, `expired` or `replaced`: `state_invalid`. A malformed amount or too ' +
            'many decimal places: `invalid_request` (the reference says 500; extensions 6). ',
          '200 means recorded: the limits are pushed to the issuer afterwards (`limits_sync` on the ' +
            'card); when the push fails only tightening takes effect (a failed loosening keeps the old ' +
            'value).',
        ].join(''),
        body: LimitsBody,
        response: { 200: Type.Object({ id: Type.String(), accepted: Type.Literal(true) }) },
      }),
      async ({ principal, params, body, write }) => write((trx) => setLimits(ctx, trx, principal, params.id, body)),
    ),

  getMerchantRules: (route, { db }) =>
    route.get(
      '/v1/cards/:id/merchant-rules',
      cardRead({
        principal: 'member',
        errors: controlErrors.getMerchantRules,
        operationId: 'getCardMerchantRules',
        summary: "Get a card's merchant rules",
        description:
          'The stored set; `synced: false` while the issuer has not confirmed it (after a 502 the ' +
          'requested set is the stored baseline, until a retry or reconciliation settles it). No rules: ' +
          '`rule_type` null and empty lists.',
        response: MerchantRules,
      }),
      async ({ principal, params }) => getMerchantRules(db, principal, params.id),
    ),

  setMerchantRules: (route, ctx) =>
    route.put(
      '/v1/cards/:id/merchant-rules',
      memberWrite({
        errors: controlErrors.merchantRules,
        operationId: 'setCardMerchantRules',
        summary: "Replace a card's merchant rules",
        description: [
          'Replaces the whole set (not an append); DELETE removes it. `rule_type` `white` or `black`; up ' +
            'to 200 `merchant_names` and 200 four-digit `mcc_list` codes, not both empty (`invalid_fields` ' +
            'with `fields`). ',
          'Card `closed`, `expired` or `replaced`: `state_invalid`; product without card-level lists: ' +
            '`product_not_available`; the issuer refused: `invalid_request` (the confirmed set stays). ',
          '200 when the issuer confirmed (`synced: true`). 502 `upstream_error`: the outcome is unknown; ' +
            'the requested set is stored as the baseline, unconfirmed (`synced: false`); retry with the ' +
            'same key. Left alone (or abandoned for a new key), the set is reconciled with the issuer: it ' +
            'becomes `synced: true` when the issuer holds it, the confirmed set comes back when it refused ' +
            'it, and it is pushed again when the issuer never received it.',
        ].join(''),
        body: MerchantRulesBody,
        response: { 200: MerchantRules },
      }),
      async (input) =>
        claimThen(
          input,
          controlLeaseMs,
          (trx) => prepareMerchantRules(ctx, trx, input.principal, input.params.id, input.body, input.idempotency.key),
          (prepared) => finishMerchantRules(ctx, prepared),
        ),
    ),

  // The reference: deletes are naturally idempotent and need no key. A key, when sent, is kept as
  // on every write (replay, retry of a 502 with the same issuer request id); without one each
  // request asks the issuer under a request id of its own.
  deleteMerchantRules: (route, ctx) =>
    route.delete(
      '/v1/cards/:id/merchant-rules',
      memberWrite({
        idempotency: 'optional',
        errors: [...controlErrors.merchantRules.filter((c) => c !== 'invalid_fields')],
        operationId: 'deleteCardMerchantRules',
        summary: "Remove a card's merchant rules",
        description:
          'Removes every restriction. Naturally idempotent: `x-idempotency-key` is optional (with one, a ' +
          '502 is retried with the same key). Same preconditions and answers as PUT; 200 answers the ' +
          'empty set (`rule_type` null) confirmed by the issuer.',
        response: { 200: MerchantRules },
      }),
      async (input) =>
        claimThen(
          input,
          controlLeaseMs,
          (trx) =>
            prepareMerchantRules(
              ctx,
              trx,
              input.principal,
              input.params.id,
              null,
              input.idempotency?.key ?? randomUUID(),
            ),
          (prepared) => finishMerchantRules(ctx, prepared),
        ),
    ),

  setBillingAddress: (route, ctx) =>
    route.patch(
      '/v1/cards/:id/billing-address',
      memberWrite({
        errors: controlErrors.billingAddress,
        operationId: 'updateCardBillingAddress',
        summary: "Change a card's billing address",
        description: [
          'Synchronous: 200 means the issuer confirmed (then the address is stored). Missing required ' +
            'field or bad country: `invalid_fields` with `fields`; ',
          'card `closed`, `expired` or `replaced`: `state_invalid`; the BIN does not allow the change: ' +
            '`product_not_available`; the issuer refused the address: `invalid_request`. ',
          '502 `upstream_error`: outcome unknown, the new address is not stored; retry with the same ' +
            'key, then read the card.',
        ].join(''),
        body: BillingAddressBody,
        response: { 200: Type.Object({ id: Type.String(), billing_address: AddressSchema }) },
      }),
      async (input) =>
        claimThen(
          input,
          controlLeaseMs,
          (trx) => prepareBillingAddress(trx, input.principal, input.params.id, input.body, input.idempotency.key),
          (prepared) => finishBillingAddress(ctx, prepared),
        ),
    ),

  unblockCvv: (route, ctx) =>
    route.post(
      '/v1/cards/:id/cvv/unblock',
      memberWrite({
        errors: controlErrors.cvvUnblock,
        operationId: 'unblockCardCvv',
        summary: "Unlock a card's CVV",
        description:
          "Lifts the issuer's CVV lock; no strong authentication. Limited to 5 calls per member per hour " +
          '(sliding hour; 429 `rate_limited` with `Retry-After`). The answer only says it was unlocked: ' +
          'read `cvv_blocked` from the card. `crd_` prefix optional.',
        response: { 200: Type.Object({ unblocked: Type.Literal(true) }) },
      }),
      async (input) =>
        claimThen(
          input,
          controlLeaseMs,
          (trx) => prepareCvvUnblock(ctx, trx, input.principal, input.params.id, input.idempotency.key),
          (prepared) => finishCvvUnblock(ctx, prepared),
        ),
    ),
} satisfies Record<string, CardRoute>;
