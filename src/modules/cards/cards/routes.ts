import { Type } from 'typebox';
import type { ServiceContext } from '../../../service-context.js';
import type { Router } from '../../../platform/routes/route.js';
import { readList, readOne, sandboxStep } from '../../../platform/routes/route-kinds.js';
import { PageQuery } from '../../../platform/routes/pagination.js';
import { hostedOrigin } from '../../hosted-screens/index.js';
import { stepUpCall, stepUpErrors } from '../../step-up/index.js';
import { IdParams, Ticket } from '../shared/schemas.js';
import { revealErrors, secureSession } from './reveal.js';
import { ActivateBody, Card } from './schemas.js';
import {
  activationLeaseMs,
  cardErrors,
  finishActivation,
  getCard,
  listCards,
  prepareActivation,
  sandboxShip,
} from './service.js';

const tags = ['Cards'];

/**
 * Card record routes (docs/cards.md): listing, reading, activation, the reveal screen, the sandbox shipping. One
 * function per route: the
 * area's index.ts registers them in the order of the OpenAPI document.
 */
export function cardRecordRoutes(route: Router, ctx: ServiceContext) {
  const { db } = ctx;
  return {
    list() {
      route.get(
        '/v1/cards',
        readList({
          scope: 'cards:read',
          principal: 'member',
          operationId: 'listCards',
          summary: "List the member's cards",
          tags,
          query: PageQuery,
          item: Card,
        }),
        async ({ principal, query }) => listCards(db, principal, query),
      );
    },

    getById() {
      route.get(
        '/v1/cards/:id',
        readOne({
          scope: 'cards:read',
          errors: cardErrors.get,
          operationId: 'getCard',
          summary: 'Get a card',
          description: 'The full record; never the card number or the CVV. `crd_` prefix optional.',
          tags,
          params: IdParams,
          response: Card,
        }),
        async ({ principal, params }) => getCard(db, principal, params.id),
      );
    },

    activate() {
      route.post(
        '/v1/cards/:id/activate',
        {
          access: { scope: 'cards:write', principal: 'member', idempotency: 'required', secretBodyFields: ['pin'] },
          errors: [...cardErrors.activate, ...stepUpErrors],
          schema: {
            operationId: 'activateCard',
            summary: 'Activate a physical card',
            description: [
              'Irreversible; protected by step-up (bound to the member and this card, 300 s, single use): ' +
                'the first call answers `step_up_required`; repeat with the same key and body and `x-step-up`. ',
              'The issuer checks `expiry` and `pin`; the PIN is never stored or logged (the idempotency ' +
                'record keeps only a keyed digest of it). ',
              'A mismatch answers `invalid_request` and is counted; the third counted failure locks the card ' +
                'for 24 hours (`state_invalid` with `locked_until`); issuer timeouts (504) and 5xx (502) are ' +
                'not counted. ',
              'After a 504/502 the outcome is unknown: retry the same request (same key, same body, the same ' +
                "`x-step-up`) within 24 hours; it passes with the challenge it already used, the issuer's " +
                'state is asked first, and the member is not asked again. Any other request needs a new ' +
                'challenge. ',
              'A repeat on an `active` card answers 200 without step-up and is not counted. Virtual cards: ' +
                '`product_not_available`; a card not `unactivated`, locked, or not yet shipped: ' +
                '`state_invalid`.',
            ].join(''),
            tags,
            params: IdParams,
            body: ActivateBody,
            response: { 200: Type.Object({ id: Type.String(), status: Type.Literal('active') }) },
          },
        },
        async ({ principal, params, body, claim, replay, req, idempotency }) => {
          const attempt = { key: idempotency.key, requestHash: idempotency.requestHash };
          const outcome = await claim(activationLeaseMs, (trx) =>
            prepareActivation(ctx, trx, principal, params.id, stepUpCall(req), attempt),
          );
          if ('replay' in outcome) return replay(outcome.replay);
          if (outcome.value.kind === 'already') return { id: outcome.value.id, status: 'active' as const };
          return finishActivation(ctx, outcome.value.card, body, outcome.value.resumed);
        },
      );
    },

    secureSession() {
      route.post(
        '/v1/cards/:id/secure-session',
        {
          access: { scope: 'cards:secure', principal: 'member', idempotency: 'required' },
          errors: revealErrors.session,
          schema: {
            operationId: 'createCardSecureSession',
            summary: 'Open the card reveal screen',
            description:
              'Scope `cards:secure` (restricted: waits for approval on production keys). A one-time ' +
              'hosted-screen link (300 seconds, single use, bound to the member and this card) on which the ' +
              'member sees the card number, expiry and CVV, fetched from the issuer at that moment. None of ' +
              "them ever passes through this API, the service's logs or its storage. Card `closed`, " +
              '`expired` or `replaced`: `state_invalid`. `crd_` prefix optional.',
            tags,
            params: IdParams,
            response: { 201: Ticket },
          },
        },
        async ({ principal, params, req, write }) =>
          write((trx) => secureSession(ctx, trx, principal, params.id, hostedOrigin(req))),
      );
    },

    sandboxShip() {
      route.post(
        '/v1/sandbox/cards/:id/ship',
        {
          access: sandboxStep,
          errors: cardErrors.ship,
          schema: {
            operationId: 'shipSandboxCard',
            summary: 'Sandbox: a physical card is shipped',
            description: 'Its inventory row becomes `shipped`.',
            tags: ['Sandbox'],
            params: IdParams,
            response: { 200: Card },
          },
        },
        async ({ principal, params, once }) => once(() => sandboxShip(ctx, principal, params.id)),
      );
    },
  };
}
