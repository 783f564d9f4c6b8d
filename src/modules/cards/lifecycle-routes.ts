import { Type } from 'typebox';
import type { AppInstance } from '../../platform/http-app.js';
import type { ServiceContext } from '../../service-context.js';
import { listEnvelope } from '../../platform/pagination.js';
import { router } from '../../platform/route.js';
import { closeLeaseMs, closingErrors, finishClose, prepareClose } from './closing/service.js';
import { createReplacement, getReplacement, listReplacements, replacementErrors } from './replacements/service.js';
import { CloseResult, IdParams, Replacement, ReplacementBody, ReplacementCreated, ReplacementListQuery } from './schemas.js';

const tags = ['Cards'];

/** Card issuing II, the lifecycle (docs/cards.md, "Replacement, closing and expiry"): replacements and closing. */
export async function cardLifecycleRoutes(app: AppInstance, ctx: ServiceContext): Promise<void> {
  const { db } = ctx;
  const route = router(app, ctx);

  route.post('/v1/cards/:id/replacements', {
    access: { scope: 'cards:write', principal: 'member', idempotency: 'required' },
    errors: [...replacementErrors.create],
    schema: {
      operationId: 'createCardReplacement',
      summary: 'Request a card replacement',
      description: [
        'Only creates the request (`crp_<uuid>`, `requested`): no money moves and no upstream call is made. The executor carries it out later (about a minute on the merchant\'s clock; the sandbox clock advance runs it). ',
        'The balance never moves between the old and the new card: it returns to the available balance and the member tops up the new card. ',
        'Security reasons (`pan_leaked`, `stolen`, `pin_locked`, `damaged`, `user_request`, `expiring`): the card is frozen, its balance returned, the replacement and postage fees (product settings) taken from the available balance in a source asset, the card cancelled and ended `replaced`. ',
        'Non-security reasons (`lost_in_transit`, `not_received`, `production_error`, `name_error`) are only for a card never activated: its inventory row is voided, no fees. ',
        'Refusals: card `closed`, `closing`, `replaced`, `expired`, another replacement in flight, or a non-security reason on an activated card: `state_invalid`; a reason outside the list: `invalid_request` (the reference answers 500 to the last three; extensions 6). `note` is kept to 200 characters.',
      ].join(''),
      tags, params: IdParams, body: ReplacementBody, response: { 201: ReplacementCreated },
    },
  }, async ({ principal, params, body, write }) => write((trx) => createReplacement(ctx, trx, principal, params.id, body)));

  route.get('/v1/cards/replacements', {
    access: { scope: 'cards:read', principal: 'either' },
    schema: {
      operationId: 'listCardReplacements',
      summary: 'List card replacements',
      description: 'Newest first, cursor pages. On behalf of a member only its own; as the merchant, all of its members\'. `card_id` (`crd_` prefix optional) lists one card\'s replacements.',
      tags, querystring: ReplacementListQuery, response: { 200: listEnvelope(Replacement) },
    },
  }, async ({ principal, query }) => listReplacements(db, principal, query));

  route.get('/v1/cards/replacements/:id', {
    access: { scope: 'cards:read', principal: 'either' },
    errors: [...replacementErrors.get],
    schema: { operationId: 'getCardReplacement', summary: 'Get a card replacement', description: 'On behalf of a member, only its own. `crp_` prefix optional.', tags, params: IdParams, response: { 200: Replacement } },
  }, async ({ principal, params }) => getReplacement(db, principal, params.id));

  route.post('/v1/cards/:id/close', {
    access: { scope: 'cards:write', principal: 'member', idempotency: 'required' },
    errors: [...closingErrors.close],
    schema: {
      operationId: 'closeCard',
      summary: 'Close a card',
      description: [
        'The card becomes `closing` at once (it spends nothing any more) and the issuer is asked to cancel it. ',
        'Confirmed: `closed`, and its balance goes back to the available balance (amounts still held by authorisations leave as they clear or are reversed). ',
        'No answer from the issuer (timeout, 5xx): 200 with `closing`; the service asks again until it answers (never undone on an unknown outcome). The issuer refused: `state_invalid`, the card is back as it was. ',
        'A repeat on a `closing` or `closed` card answers its status. `expired`, `replaced`, or a replacement in flight: `state_invalid`. Events `card.closing`, `card.closed`.',
      ].join(''),
      tags, params: IdParams, response: { 200: CloseResult },
    },
  }, async ({ principal, params, claim, replay }) => {
    const outcome = await claim(closeLeaseMs, (trx) => prepareClose(ctx, trx, principal, params.id));
    if ('replay' in outcome) return replay(outcome.replay);
    if (outcome.value.kind === 'answer') return { id: outcome.value.id, status: outcome.value.status };
    return finishClose(ctx, outcome.value.card);
  });
}
