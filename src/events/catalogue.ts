/**
 * The event catalogue: every event type the service writes to the `events` outbox, with the
 * `data.object` its webhook body carries. The one list: `recordEvent` only takes these types
 * (`EventInput.type` is `EventType`, so an emitter whose type is built from a status union must
 * have every member here, or `npm run typecheck` fails), webhook endpoints may subscribe only to
 * these (or `*`), and the OpenAPI document's `webhooks` lists them. `test/event-types.test.ts`
 * also scans the emitters' source for the types they write.
 */
export const eventCatalogue = {
  'deposit.credited': { object: 'deposit', description: 'A deposit was credited to a member.' },
  'withdrawal.locked': { object: 'withdrawal', description: 'A withdrawal was created; its funds are locked.' },
  'withdrawal.settled': { object: 'withdrawal', description: 'A withdrawal was confirmed and settled.' },
  'withdrawal.failed': { object: 'withdrawal', description: 'A withdrawal failed; the locked funds were returned.' },
  'exchange.order.quoted': { object: 'exchange_order', description: 'An exchange order was quoted (rate locked).' },
  'exchange.order.completed': { object: 'exchange_order', description: 'An exchange order was executed.' },
  'exchange.order.expired': { object: 'exchange_order', description: 'A locked quote ended unused.' },
  'remittance.order.pending': { object: 'remittance_order', description: 'A remittance order was accepted.' },
  'remittance.order.processing': {
    object: 'remittance_order',
    description: 'A remittance order is with the provider.',
  },
  'remittance.order.completed': { object: 'remittance_order', description: 'A remittance order was paid out.' },
  'remittance.order.failed': {
    object: 'remittance_order',
    description: 'A remittance order failed; the debit was returned.',
  },
  'remittance.order.returned': {
    object: 'remittance_order',
    description: 'A paid-out remittance came back; the funds were returned.',
  },
  'card.application.pending': { object: 'card_application', description: 'A card application was submitted.' },
  'card.application.need_docs': { object: 'card_application', description: 'The issuer asks for more documents.' },
  'card.application.approved': { object: 'card_application', description: 'A card application was approved.' },
  'card.application.rejected': { object: 'card_application', description: 'A card application was rejected.' },
  'card.application.failed': { object: 'card_application', description: 'A card application failed.' },
  'card.unactivated': { object: 'card', description: 'A card was issued, not yet activated.' },
  'card.active': { object: 'card', description: 'A card is active.' },
  'card.closing': { object: 'card', description: 'A card is being closed.' },
  'card.closed': { object: 'card', description: 'A card was closed.' },
  'card.expired': { object: 'card', description: 'A card expired.' },
  'card.replaced': { object: 'card', description: 'A card was replaced by a new one.' },
  'card.replacement.requested': { object: 'card_replacement', description: 'A card replacement was requested.' },
  'card.replacement.processing': { object: 'card_replacement', description: 'A card replacement is being executed.' },
  'card.replacement.completed': { object: 'card_replacement', description: 'A card replacement completed.' },
  'card.replacement.failed': { object: 'card_replacement', description: 'A card replacement failed.' },
  'card.topup.credited': { object: 'card_topup', description: 'The issuer confirmed the funds are on the card.' },
  'card.topup.failed': { object: 'card_topup', description: 'A card top-up failed; the debit was returned.' },
  'card.transaction.authorization': { object: 'card_transaction', description: 'A card authorization.' },
  'card.transaction.clearing': { object: 'card_transaction', description: 'A card transaction cleared.' },
  'card.transaction.reversal': { object: 'card_transaction', description: 'A card authorization was reversed.' },
  'card.transaction.refund': { object: 'card_transaction', description: 'A card refund.' },
  'kyc.profile.pending_review': { object: 'kyc_profile', description: 'A KYC profile was submitted for review.' },
  'kyc.profile.approved': { object: 'kyc_profile', description: 'A KYC profile was approved.' },
  'kyc.profile.rejected': { object: 'kyc_profile', description: 'A KYC profile was rejected.' },
  'earn.order.settled': {
    object: 'earn_order',
    description: 'Earnings posted: a flexible payout or a fixed-term maturity.',
  },
  'qrpay.order.completed': { object: 'qrpay_order', description: 'A QR payment completed.' },
  'qrpay.order.failed': { object: 'qrpay_order', description: 'A QR payment failed; the debit was returned in full.' },
  'qrpay.order.refunded': { object: 'qrpay_order', description: 'A QR payment was refunded to the available balance.' },
  // Written by the ledger's trigger on the merchant's balances (migration 047), not by recordEvent.
  'balance_monitor.triggered': {
    object: 'balance_monitor',
    description: "A posting took the watched prepaid or custody balance below the monitor's `below`.",
  },
  'balance_monitor.resolved': {
    object: 'balance_monitor',
    description: "A posting brought the watched balance back at or above the monitor's `below`.",
  },
  'export.completed': {
    object: 'export',
    description: "An export's file is written; download it from `GET /v1/exports/{id}/file`.",
  },
  'export.failed': { object: 'export', description: 'An export could not be written.' },
} as const satisfies Record<string, { object: string; description: string }>;

export type EventType = keyof typeof eventCatalogue;

/** Every event type, in catalogue order. */
export const eventTypes = Object.keys(eventCatalogue) as EventType[];

export function isEventType(value: string): value is EventType {
  return Object.hasOwn(eventCatalogue, value);
}
