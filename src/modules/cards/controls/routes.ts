import { randomUUID } from 'node:crypto';
import { Type } from 'typebox';
import type { ServiceContext } from '../../../service-context.js';
import type { Router } from '../../../platform/routes/route.js';
import { readOne } from '../../../platform/routes/route-kinds.js';
import { AddressSchema, IdParams } from '../shared/schemas.js';
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

const tags = ['Cards'];

/**
 * Card control routes (docs/cards.md): limits, merchant rules, billing address, CVV unlock. One function per route: the
 * area's index.ts registers them in the order of the OpenAPI document.
 */
export function controlRoutes(route: Router, ctx: ServiceContext) {
  const { db } = ctx;
  return {
    setLimits() {
      route.patch(
        '/v1/cards/:id/limits',
        {
          access: { scope: 'cards:write', principal: 'member', idempotency: 'optional' },
          errors: controlErrors.limits,
          schema: {
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
            tags,
            params: IdParams,
            body: LimitsBody,
            response: { 200: Type.Object({ id: Type.String(), accepted: Type.Literal(true) }) },
          },
        },
        async ({ principal, params, body, write }) => write((trx) => setLimits(ctx, trx, principal, params.id, body)),
      );
    },

    getMerchantRules() {
      route.get(
        '/v1/cards/:id/merchant-rules',
        readOne({
          scope: 'cards:read',
          principal: 'member',
          errors: controlErrors.getMerchantRules,
          operationId: 'getCardMerchantRules',
          summary: "Get a card's merchant rules",
          description:
            'The stored set; `synced: false` while the issuer has not confirmed it (after a 502 the ' +
            'requested set is the stored baseline, until a retry or reconciliation settles it). No rules: ' +
            '`rule_type` null and empty lists.',
          tags,
          params: IdParams,
          response: MerchantRules,
        }),
        async ({ principal, params }) => getMerchantRules(db, principal, params.id),
      );
    },

    setMerchantRules() {
      route.put(
        '/v1/cards/:id/merchant-rules',
        {
          access: { scope: 'cards:write', principal: 'member', idempotency: 'required' },
          errors: controlErrors.merchantRules,
          schema: {
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
            tags,
            params: IdParams,
            body: MerchantRulesBody,
            response: { 200: MerchantRules },
          },
        },
        async ({ principal, params, body, claim, replay, idempotency }) => {
          const outcome = await claim(controlLeaseMs, (trx) =>
            prepareMerchantRules(ctx, trx, principal, params.id, body, idempotency.key),
          );
          if ('replay' in outcome) return replay(outcome.replay);
          return finishMerchantRules(ctx, outcome.value);
        },
      );
    },

    deleteMerchantRules() {
      // The reference: deletes are naturally idempotent and need no key. A key, when sent, is kept as
      // on every write (replay, retry of a 502 with the same issuer request id); without one each
      // request asks the issuer under a request id of its own.
      route.delete(
        '/v1/cards/:id/merchant-rules',
        {
          access: { scope: 'cards:write', principal: 'member', idempotency: 'optional' },
          errors: [...controlErrors.merchantRules.filter((c) => c !== 'invalid_fields')],
          schema: {
            operationId: 'deleteCardMerchantRules',
            summary: "Remove a card's merchant rules",
            description:
              'Removes every restriction. Naturally idempotent: `x-idempotency-key` is optional (with one, a ' +
              '502 is retried with the same key). Same preconditions and answers as PUT; 200 answers the ' +
              'empty set (`rule_type` null) confirmed by the issuer.',
            tags,
            params: IdParams,
            response: { 200: MerchantRules },
          },
        },
        async ({ principal, params, claim, replay, idempotency }) => {
          const outcome = await claim(controlLeaseMs, (trx) =>
            prepareMerchantRules(ctx, trx, principal, params.id, null, idempotency?.key ?? randomUUID()),
          );
          if ('replay' in outcome) return replay(outcome.replay);
          return finishMerchantRules(ctx, outcome.value);
        },
      );
    },

    setBillingAddress() {
      route.patch(
        '/v1/cards/:id/billing-address',
        {
          access: { scope: 'cards:write', principal: 'member', idempotency: 'required' },
          errors: controlErrors.billingAddress,
          schema: {
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
            tags,
            params: IdParams,
            body: BillingAddressBody,
            response: { 200: Type.Object({ id: Type.String(), billing_address: AddressSchema }) },
          },
        },
        async ({ principal, params, body, claim, replay, idempotency }) => {
          const outcome = await claim(controlLeaseMs, (trx) =>
            prepareBillingAddress(trx, principal, params.id, body, idempotency.key),
          );
          if ('replay' in outcome) return replay(outcome.replay);
          return finishBillingAddress(ctx, outcome.value);
        },
      );
    },

    unblockCvv() {
      route.post(
        '/v1/cards/:id/cvv/unblock',
        {
          access: { scope: 'cards:write', principal: 'member', idempotency: 'required' },
          errors: controlErrors.cvvUnblock,
          schema: {
            operationId: 'unblockCardCvv',
            summary: "Unlock a card's CVV",
            description:
              "Lifts the issuer's CVV lock; no strong authentication. Limited to 5 calls per member per hour " +
              '(sliding hour; 429 `rate_limited` with `Retry-After`). The answer only says it was unlocked: ' +
              'read `cvv_blocked` from the card. `crd_` prefix optional.',
            tags,
            params: IdParams,
            response: { 200: Type.Object({ unblocked: Type.Literal(true) }) },
          },
        },
        async ({ principal, params, claim, replay, idempotency }) => {
          const outcome = await claim(controlLeaseMs, (trx) =>
            prepareCvvUnblock(ctx, trx, principal, params.id, idempotency.key),
          );
          if ('replay' in outcome) return replay(outcome.replay);
          return finishCvvUnblock(ctx, outcome.value);
        },
      );
    },
  };
}
