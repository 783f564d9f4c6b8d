/**
 * The card area's events in the reference's envelope (docs/cards.md, "Events"): every card object
 * (card, application, replacement, top-up, transaction) names its member by the merchant's
 * external id and carries its status version.
 */
import { recordEvent, rowEnvelope, type EventSubject, type EventType } from '../../../events/index.js';
import { externalIdOf, type Db } from './queries.js';
import type { CardReplacementRow } from '../replacements/tables.js';
import type { CardRow } from '../cards/tables.js';

/** What an event needs of the object's row: the envelope's columns and the member. */
export interface CardEventSubject extends EventSubject {
  member_id: string;
}

/** Records `type` for the object in the caller's transaction. */
export async function emitCardEvent(
  trx: Db,
  row: CardEventSubject,
  event: { type: EventType; object: string; status: string },
): Promise<void> {
  await recordEvent(trx, { ...rowEnvelope(row), ...event, externalMemberId: await externalIdOf(trx, row) });
}

/** `card.<status>` (card.active, card.closing, card.closed, card.expired, card.replaced, ...). */
export const emitCardStatus = (
  trx: Db,
  c: Pick<CardRow, 'merchant_id' | 'environment' | 'status' | 'id' | 'member_id' | 'status_version'>,
) => emitCardEvent(trx, c, { type: `card.${c.status}`, object: 'card', status: c.status });

/** `card.replacement.<status>` (requested, processing, completed, failed). */
export const emitReplacement = (trx: Db, r: CardReplacementRow) =>
  emitCardEvent(trx, r, { type: `card.replacement.${r.status}`, object: 'card_replacement', status: r.status });
