/**
 * The reference type of QR payments' entries: with the order id as reference each entry kind posts
 * once per order. The kinds and their lines (posting rules: the money leaves to the acquirer
 * through settlement clearing) are src/money/posting-rules/qrpay.ts.
 */
export const qrpayReferenceType = 'qrpay_order';
