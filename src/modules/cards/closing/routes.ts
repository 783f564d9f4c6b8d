import type { ServiceContext } from '../../../service-context.js';
import type { Router } from '../../../platform/routes/route.js';
import { IdParams } from '../shared/schemas.js';
import { CloseResult } from './schemas.js';
import { closeLeaseMs, closingErrors, finishClose, prepareClose } from './service.js';

const tags = ['Cards'];

/**
 * Card closing route (docs/cards.md, "Replacement, closing and expiry"). One function per route: the
 * area's index.ts registers them in the order of the OpenAPI document.
 */
export function closingRoutes(route: Router, ctx: ServiceContext) {
  return {
    close() {
      route.post(
        '/v1/cards/:id/close',
        {
          access: { scope: 'cards:write', principal: 'member', idempotency: 'required' },
          errors: closingErrors.close,
          schema: {
            operationId: 'closeCard',
            summary: 'Close a card',
            description: [
              'The card becomes `closing` at once (it spends nothing any more) and the issuer is asked to cancel it. ',
              'Confirmed: `closed`, and its balance goes back to the available balance (amounts still held ' +
                'by authorisations leave as they clear or are reversed). ',
              'No answer from the issuer (timeout, 5xx): 200 with `closing`; the service asks again until it ' +
                'answers (never undone on an unknown outcome). The issuer refused: `state_invalid`, the card ' +
                'is back as it was. ',
              'A repeat on a `closing` or `closed` card answers its status. `expired`, `replaced`, or a ' +
                'replacement in flight: `state_invalid`. Events `card.closing`, `card.closed`.',
            ].join(''),
            tags,
            params: IdParams,
            response: { 200: CloseResult },
          },
        },
        async ({ principal, params, claim, replay }) => {
          const outcome = await claim(closeLeaseMs, (trx) => prepareClose(ctx, trx, principal, params.id));
          if ('replay' in outcome) return replay(outcome.replay);
          if (outcome.value.kind === 'answer') return { id: outcome.value.id, status: outcome.value.status };
          return finishClose(ctx, outcome.value.card);
        },
      );
    },
  };
}
