import { cardList, cardRead, memberWrite, type CardRoute } from '../shared/routes.js';
import { Replacement, ReplacementBody, ReplacementCreated, ReplacementListQuery } from './schemas.js';
import { createReplacement, getReplacement, listReplacements, replacementErrors } from './service.js';

/**
 * Card replacement routes (docs/cards.md, "Replacement, closing and expiry"); the area's index.ts registers them in
 * the order of the OpenAPI document.
 */
export const replacementRoutes = {
  create: (route, ctx) =>
    route.post(
      '/v1/cards/:id/replacements',
      memberWrite({
        errors: replacementErrors.create,
        operationId: 'createCardReplacement',
        summary: 'Request a card replacement',
        description: [
          'Only creates the request (`crp_<uuid>`, `requested`): no money moves and no upstream call is ' +
            "made. The executor carries it out later (about a minute on the merchant's clock; the sandbox " +
            'clock advance runs it). ',
          'The balance never moves between the old and the new card: it returns to the available balance ' +
            'and the member tops up the new card. ',
          'Security reasons (`pan_leaked`, `stolen`, `pin_locked`, `damaged`, `user_request`, ' +
            '`expiring`): the card is frozen, its balance returned, the replacement and postage fees ' +
            '(product settings) taken from the available balance in a source asset, the card cancelled and ' +
            'ended `replaced`. ',
          'Non-security reasons (`lost_in_transit`, `not_received`, `production_error`, `name_error`) ' +
            'are only for a card never activated: its inventory row is voided, no fees. ',
          'Refusals: card `closed`, `closing`, `replaced`, `expired`, another replacement in flight, or ' +
            'a non-security reason on an activated card: `state_invalid`; a reason outside the list: ' +
            '`invalid_request` (the reference answers 500 to the last three; extensions 6). `note` is kept ' +
            'to 200 characters.',
        ].join(''),
        body: ReplacementBody,
        response: { 201: ReplacementCreated },
      }),
      async ({ principal, params, body, write }) =>
        write((trx) => createReplacement(ctx, trx, principal, params.id, body)),
    ),

  list: (route, { db }) =>
    route.get(
      '/v1/cards/replacements',
      cardList({
        operationId: 'listCardReplacements',
        summary: 'List card replacements',
        description:
          'Newest first, cursor pages. On behalf of a member only its own; as the merchant, all of its ' +
          "members'. `card_id` (`crd_` prefix optional) lists one card's replacements.",
        query: ReplacementListQuery,
        item: Replacement,
      }),
      async ({ principal, query }) => listReplacements(db, principal, query),
    ),

  getById: (route, { db }) =>
    route.get(
      '/v1/cards/replacements/:id',
      cardRead({
        errors: replacementErrors.get,
        operationId: 'getCardReplacement',
        summary: 'Get a card replacement',
        description: 'On behalf of a member, only its own. `crp_` prefix optional.',
        response: Replacement,
      }),
      async ({ principal, params }) => getReplacement(db, principal, params.id),
    ),
} satisfies Record<string, CardRoute>;
