/**
 * Card reveal (docs/cards.md): `POST /v1/cards/{id}/secure-session` (scope `cards:secure`) issues
 * a `card_reveal` ticket (300 s, single use, bound to the member and the card). Its hosted screen
 * asks the member to press "Show card details"; that submission spends the ticket and fetches the
 * number, expiry and CVV from the card issuer at that moment, and they appear on that one page
 * only (served `no-store`). They are never stored, logged, put in an event or answered by the API.
 * The first view (GET) reads nothing secret, so a link preview cannot spend or leak it.
 */
import type { Transaction } from 'kysely';
import type { Database } from '../../../db/schema.js';
import type { ServiceContext } from '../../../service-context.js';
import { ApiError, type ErrorCode } from '../../../platform/errors.js';
import { withDeadline } from '../../../upstreams/deadline.js';
import type { CardUpstream } from '../../../upstreams/index.js';
import {
  completeTicket,
  form,
  type HostedScreen,
  html,
  issueTicket,
  type ScreenPage,
  summaryList,
  type Ticket,
  ticketView,
  voidTicket,
  ticketScope,
} from '../../hosted-screens/index.js';
import { cardOrNotFound, findCard } from './queries.js';
import { type Db, type MemberCardCaller } from '../shared/queries.js';
import { expiryText } from './rules.js';
import { rowScope } from '../../../db/owned-by.js';

// Plain text (no character `html` escapes), split only to keep the lines short.
const shownOnceNotice =
  'The number, expiry date and security code are shown once, on the next page, ' + 'and this link then stops working.';
const notKeptHint =
  'We do not keep these details. Close this page when you are done; ' +
  'to see them again, ask for a new link in the app.';

export const revealErrors = {
  session: ['not_found', 'state_invalid'],
} as const satisfies Record<string, readonly ErrorCode[]>;

/** Cards whose details can be shown: not closed, expired or replaced. */
const revealable = new Set(['unactivated', 'active', 'closing']);
/**
 * Nor frozen by a security replacement (reported stolen, the number leaked, ...): details that are
 * about to be cancelled are not shown again, least of all to whoever may now hold the member's access.
 */
const canReveal = (card: { status: string; frozen_at: Date | null }) =>
  revealable.has(card.status) && card.frozen_at === null;

export async function secureSession(
  ctx: ServiceContext,
  trx: Transaction<Database>,
  caller: MemberCardCaller,
  id: string,
  origin: string,
) {
  const card = await cardOrNotFound(trx, caller, id, true);
  if (!canReveal(card))
    throw new ApiError(
      'state_invalid',
      card.frozen_at === null ? `The card is ${card.status}.` : 'The card is frozen by a security replacement.',
    );
  const ticket = await issueTicket(ctx, trx, {
    merchantId: caller.merchantId,
    environment: caller.environment,
    memberId: caller.memberId,
    purpose: 'card_reveal',
    origin,
    subjectId: card.id,
  });
  return ticketView(ticket);
}

async function cardOf(db: Db, ticket: Ticket, forUpdate = false) {
  const card = ticket.subject_id ? await findCard(db, ticketScope(ticket), ticket.subject_id, forUpdate) : undefined;
  return card && canReveal(card) ? card : undefined;
}

const gonePage: ScreenPage = {
  title: 'Card details unavailable',
  body: html`<p>This card's details can no longer be shown. You can close this page.</p>`,
};

/** Groups of four, as printed on the card. */
const grouped = (number: string) => number.replace(/(\d{4})(?=\d)/g, '$1 ');

export const cardRevealScreen: HostedScreen = {
  purpose: 'card_reveal',
  acceptsFiles: false,
  async render(ctx, ticket, state) {
    const card = await cardOf(ctx.db, ticket);
    if (!card) return gonePage;
    return {
      title: 'Show your card details',
      body: html`<p>Your card ending in <strong>${card.last4}</strong>. ${shownOnceNotice}</p>
        <p class="hint">Make sure nobody can see your screen.</p>
        ${form(state.form, { submitLabel: 'Show card details' }, html``)}`,
    };
  },
  /** The issuer is asked before the submit transaction; the answer stays in memory for this one page. */
  async prepare(ctx, ticket) {
    const card = await cardOf(ctx.db, ticket);
    if (!card) return undefined;
    const call = rowScope(card);
    return withDeadline(ctx.config.upstreamCallTimeoutMs, () => ctx.upstreams.card.reveal(call, card.upstream_ref));
  },
  async submit(_ctx, trx, ticket, _fields, _files, now, prepared) {
    const card = await cardOf(trx, ticket, true);
    if (!card) {
      await voidTicket(trx, ticket.id);
      return { kind: 'done', page: gonePage };
    }
    const shown = prepared as
      Awaited<ReturnType<CardUpstream['reveal']>> | { kind: 'timeout' } | { kind: 'unknown' } | undefined;
    if (shown?.kind !== 'revealed') {
      // Nothing spent: the member may try again while the link lasts.
      return {
        kind: 'invalid',
        values: {},
        errors: [{ field: 'reveal', message: 'Your card details cannot be shown right now. Try again in a moment.' }],
      };
    }
    await completeTicket(trx, ticket.id, now);
    return {
      kind: 'done',
      page: {
        title: 'Your card details',
        body: html`${summaryList([
          { label: 'Card number', value: grouped(shown.number) },
          { label: 'Expiry date', value: expiryText(shown.expMonth, shown.expYear) },
          { label: 'CVV', value: shown.cvv },
        ])}<p class="hint">${notKeptHint}</p>`,
      },
    };
  },
  async sandboxComplete() {
    throw new ApiError('invalid_request', 'The card reveal screen is only completed by the member.');
  },
};
