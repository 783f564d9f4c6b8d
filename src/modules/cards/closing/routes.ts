import { claimThen, memberWrite, type CardRoute } from '../shared/routes.js';
import { CloseResult } from './schemas.js';
import { closeLeaseMs, closingErrors, finishClose, prepareClose } from './service.js';

/**
 * Card closing route (docs/cards.md, "Replacement, closing and expiry"); the area's index.ts registers it in the
 * order of the OpenAPI document.
 */
export const closingRoutes = {
  close: (route, ctx) =>
    route.post(
      '/v1/cards/:id/close',
      memberWrite({
        errors: closingErrors.close,
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
        response: { 200: CloseResult },
      }),
      async (input) =>
        claimThen(
          input,
          closeLeaseMs,
          (trx) => prepareClose(ctx, trx, input.principal, input.params.id),
          (prepared) =>
            prepared.kind === 'answer' ? { id: prepared.id, status: prepared.status } : finishClose(ctx, prepared.card),
        ),
    ),
} satisfies Record<string, CardRoute>;
