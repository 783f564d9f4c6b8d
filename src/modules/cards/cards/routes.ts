import { Type } from 'typebox';
import { PageQuery } from '../../../platform/routes/pagination.js';
import { stepUpCall, stepUpErrors } from '../../step-up/index.js';
import {
  cardList,
  cardRead,
  claimThen,
  memberWrite,
  sandboxCardStep,
  screenSession,
  type CardRoute,
} from '../shared/routes.js';
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

/**
 * Card record routes (docs/cards.md): listing, reading, activation, the reveal screen, the sandbox shipping; the
 * area's index.ts registers them in the order of the OpenAPI document.
 */
export const cardRecordRoutes = {
  list: (route, { db }) =>
    route.get(
      '/v1/cards',
      cardList({
        principal: 'member',
        operationId: 'listCards',
        summary: "List the member's cards",
        query: PageQuery,
        item: Card,
      }),
      async ({ principal, query }) => listCards(db, principal, query),
    ),

  getById: (route, { db }) =>
    route.get(
      '/v1/cards/:id',
      cardRead({
        errors: cardErrors.get,
        operationId: 'getCard',
        summary: 'Get a card',
        description: 'The full record; never the card number or the CVV. `crd_` prefix optional.',
        response: Card,
      }),
      async ({ principal, params }) => getCard(db, principal, params.id),
    ),

  activate: (route, ctx) =>
    route.post(
      '/v1/cards/:id/activate',
      memberWrite({
        secretBodyFields: ['pin'],
        errors: [...cardErrors.activate, ...stepUpErrors],
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
        body: ActivateBody,
        response: { 200: Type.Object({ id: Type.String(), status: Type.Literal('active') }) },
      }),
      async (input) => {
        const { principal, params, body, req, idempotency } = input;
        const attempt = { key: idempotency.key, requestHash: idempotency.requestHash };
        return claimThen(
          input,
          activationLeaseMs,
          (trx) => prepareActivation(ctx, trx, principal, params.id, stepUpCall(req), attempt),
          (prepared) =>
            prepared.kind === 'already'
              ? { id: prepared.id, status: 'active' as const }
              : finishActivation(ctx, prepared.card, body, prepared.resumed),
        );
      },
    ),

  secureSession: screenSession(
    '/v1/cards/:id/secure-session',
    {
      scope: 'cards:secure',
      errors: revealErrors.session,
      operationId: 'createCardSecureSession',
      summary: 'Open the card reveal screen',
      description:
        'Scope `cards:secure` (restricted: waits for approval on production keys). A one-time ' +
        'hosted-screen link (300 seconds, single use, bound to the member and this card) on which the ' +
        'member sees the card number, expiry and CVV, fetched from the issuer at that moment. None of ' +
        "them ever passes through this API, the service's logs or its storage. Card `closed`, " +
        '`expired` or `replaced`: `state_invalid`. `crd_` prefix optional.',
    },
    secureSession,
  ),

  sandboxShip: (route, ctx) =>
    route.post(
      '/v1/sandbox/cards/:id/ship',
      sandboxCardStep({
        errors: cardErrors.ship,
        operationId: 'shipSandboxCard',
        summary: 'Sandbox: a physical card is shipped',
        description: 'Its inventory row becomes `shipped`.',
        response: { 200: Card },
      }),
      async ({ principal, params, once }) => once(() => sandboxShip(ctx, principal, params.id)),
    ),
} satisfies Record<string, CardRoute>;
