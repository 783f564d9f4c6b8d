/**
 * The entry kinds of QR payments: with the order id as reference each kind posts once per order.
 * Their lines (posting rules: the money leaves to the acquirer through settlement clearing) are
 * src/money/posting-rules/qrpay.ts.
 */
export const qrpayReferenceType = 'qrpay_order';

export const qrpayEntryKinds = {
  freeze: 'qrpay.freeze',
  complete: 'qrpay.complete',
  fail: 'qrpay.fail',
  refund: 'qrpay.refund',
} as const;
