import { claimThen, cardRead, memberWrite, sandboxCardStep, screenSession, type CardRoute } from '../shared/routes.js';
import { AdvanceBody, ApplicationBody, CardApplication } from './schemas.js';
import {
  applicationErrors,
  createApplication,
  getApplication,
  sandboxAdvance,
  submitLeaseMs,
  submitToIssuer,
  supplementSession,
} from './service.js';

/**
 * Card application routes (docs/cards.md): applying, reading, the supplement screen, the sandbox decision; the
 * area's index.ts registers them in the order of the OpenAPI document.
 */
export const applicationRoutes = {
  create: (route, ctx) =>
    route.post(
      '/v1/cards/applications',
      memberWrite({
        errors: applicationErrors.create,
        operationId: 'createCardApplication',
        summary: 'Apply for a card',
        description: [
          "Signed. Checks the member's KYC level (`card_issuing`), the product (`product_not_available`: " +
            'unknown, disabled, BIN not authorised, or `source_asset` not in its list) and, for a physical ' +
            'card, `shipping_address` (`invalid_fields`). ',
          'The opening fee is frozen in `source_asset` (available → frozen; `insufficient_balance`), ' +
            'then the issuer is asked. The answer is `pending` while the issuer reviews, or `rejected` ' +
            '(fee refunded) when it refuses at once. ',
          'Later: `approved` (fee charged; card opened, `unactivated` when physical, `active` when ' +
            'virtual; `card_id` set), `rejected`, or `need_docs` with a supplement work order ' +
            '(`supplement.status` `pending`; see the supplement-sessions call); a work order that expires ' +
            'fails the application and refunds the fee. ',
          'A timeout or 5xx of the issuer leaves the application `pending` and the fee frozen (never ' +
            "refunded on an unknown outcome) until reconciliation learns the issuer's state: its decision " +
            'is applied as above; an application it never received is submitted again.',
        ].join(''),
        params: null,
        body: ApplicationBody,
        response: { 201: CardApplication },
      }),
      async (input) =>
        claimThen(
          input,
          submitLeaseMs,
          (trx) => createApplication(ctx, trx, input.principal, input.body),
          (submitted) => submitToIssuer(ctx, submitted),
        ),
    ),

  getById: (route, { db }) =>
    route.get(
      '/v1/cards/applications/:id',
      cardRead({
        errors: applicationErrors.get,
        operationId: 'getCardApplication',
        summary: 'Get a card application',
        description: 'On behalf of a member, only its own. `cap_` prefix optional.',
        response: CardApplication,
      }),
      async ({ principal, params }) => getApplication(db, principal, params.id),
    ),

  supplementSession: screenSession(
    '/v1/cards/applications/:id/supplement-sessions',
    {
      errors: applicationErrors.supplementSession,
      operationId: 'createCardSupplementSession',
      summary: 'Open the card supplement screen',
      description:
        'A one-time hosted-screen link (24 hours, bound to the member and the work order, void after a ' +
        'successful submission) on which the member re-uploads identity photos. Name, birth date, ' +
        'document number and address cannot be changed there. 404 `not_found` when the application is ' +
        "missing, not this member's, or has no pending work order. `cap_` prefix optional.",
    },
    supplementSession,
  ),

  sandboxAdvance: (route, ctx) =>
    route.post(
      '/v1/sandbox/cards/applications/:id/advance',
      sandboxCardStep({
        errors: applicationErrors.advance,
        operationId: 'advanceSandboxCardApplication',
        summary: 'Sandbox: the issuer decides a card application',
        description:
          '`need_docs` (from `pending`: a supplement work order), `approved` (from `pending`: card ' +
          'opened, fee charged) or `rejected` (from `pending`: fee refunded). A repeat of the decision ' +
          'answers the application.',
        body: AdvanceBody,
        response: { 200: CardApplication },
      }),
      async ({ principal, params, body, once }) => once(() => sandboxAdvance(ctx, principal, params.id, body.to)),
    ),
} satisfies Record<string, CardRoute>;
