import type { ServiceContext } from '../../../service-context.js';
import type { Router } from '../../../platform/routes/route.js';
import { readOne, sandboxStep } from '../../../platform/routes/route-kinds.js';
import { hostedOrigin } from '../../hosted-screens/index.js';
import { IdParams, Ticket } from '../shared/schemas.js';
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

const tags = ['Cards'];

/**
 * Card application routes (docs/cards.md): applying, reading, the supplement screen, the sandbox decision. One function
 * per route: the
 * area's index.ts registers them in the order of the OpenAPI document.
 */
export function applicationRoutes(route: Router, ctx: ServiceContext) {
  const { db } = ctx;
  return {
    create() {
      route.post(
        '/v1/cards/applications',
        {
          access: { scope: 'cards:write', principal: 'member', idempotency: 'required' },
          errors: applicationErrors.create,
          schema: {
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
            tags,
            body: ApplicationBody,
            response: { 201: CardApplication },
          },
        },
        async ({ principal, body, claim, replay }) => {
          const outcome = await claim(submitLeaseMs, (trx) => createApplication(ctx, trx, principal, body));
          if ('replay' in outcome) return replay(outcome.replay);
          return submitToIssuer(ctx, outcome.value);
        },
      );
    },

    getById() {
      route.get(
        '/v1/cards/applications/:id',
        readOne({
          scope: 'cards:read',
          errors: applicationErrors.get,
          operationId: 'getCardApplication',
          summary: 'Get a card application',
          description: 'On behalf of a member, only its own. `cap_` prefix optional.',
          tags,
          params: IdParams,
          response: CardApplication,
        }),
        async ({ principal, params }) => getApplication(db, principal, params.id),
      );
    },

    supplementSession() {
      route.post(
        '/v1/cards/applications/:id/supplement-sessions',
        {
          access: { scope: 'cards:write', principal: 'member', idempotency: 'required' },
          errors: applicationErrors.supplementSession,
          schema: {
            operationId: 'createCardSupplementSession',
            summary: 'Open the card supplement screen',
            description:
              'A one-time hosted-screen link (24 hours, bound to the member and the work order, void after a ' +
              'successful submission) on which the member re-uploads identity photos. Name, birth date, ' +
              'document number and address cannot be changed there. 404 `not_found` when the application is ' +
              "missing, not this member's, or has no pending work order. `cap_` prefix optional.",
            tags,
            params: IdParams,
            response: { 201: Ticket },
          },
        },
        async ({ principal, params, req, write }) =>
          write((trx) => supplementSession(ctx, trx, principal, params.id, hostedOrigin(req))),
      );
    },

    sandboxAdvance() {
      route.post(
        '/v1/sandbox/cards/applications/:id/advance',
        {
          access: sandboxStep,
          errors: applicationErrors.advance,
          schema: {
            operationId: 'advanceSandboxCardApplication',
            summary: 'Sandbox: the issuer decides a card application',
            description:
              '`need_docs` (from `pending`: a supplement work order), `approved` (from `pending`: card ' +
              'opened, fee charged) or `rejected` (from `pending`: fee refunded). A repeat of the decision ' +
              'answers the application.',
            tags: ['Sandbox'],
            params: IdParams,
            body: AdvanceBody,
            response: { 200: CardApplication },
          },
        },
        async ({ principal, params, body, once }) => once(() => sandboxAdvance(ctx, principal, params.id, body.to)),
      );
    },
  };
}
