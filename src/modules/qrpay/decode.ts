/** Pure: a scanned QR's text as what it asks to pay (payee, scheme, amount), or `qr_code_invalid`. */
import { ApiError } from '../../platform/errors.js';
import { formatAmount, parseAmount } from '../../money/index.js';
import { readAmount } from '../../money/index.js';
import { EmvcoError, decodeEmvco, type DecodedQr, type MerchantAccount } from './emvco.js';
import { schemeOf, type QrScheme } from './schemes.js';

export interface ReadQr {
  decoded: DecodedQr;
  scheme: QrScheme;
  account: MerchantAccount;
}

/** The QR decoded and its scheme found; either failing is `qr_code_invalid`. */
export function readQr(qrCode: string): ReadQr {
  let decoded: DecodedQr;
  try {
    decoded = decodeEmvco(qrCode);
  } catch (err) {
    if (err instanceof EmvcoError) throw new ApiError('qr_code_invalid', err.message);
    throw err;
  }
  const found = schemeOf(decoded);
  if (!found) throw new ApiError('qr_code_invalid', 'The QR code is of a scheme the service does not support.');
  return { decoded, ...found };
}

/**
 * The QR amount in minor units at `scale`, or null; too many decimals for the currency, or a zero
 * amount (a QR asks for a positive amount or none), is an invalid QR. The code is the payee's text,
 * not ours: leading zeros ("05.00") are read past.
 */
export function qrAmountMinor(decoded: DecodedQr, scale: number): bigint | null {
  if (decoded.amount === null) return null;
  const reading = readAmount(decoded.amount.replace(/^0+(?=\d)/, ''), scale);
  if (!reading.ok)
    throw new ApiError('qr_code_invalid', 'The QR amount has more decimal places than its currency allows.');
  if (reading.minor === 0n) throw new ApiError('qr_code_invalid', 'The QR amount is zero.');
  return reading.minor;
}

/**
 * The QR amount as `POST /v1/qrpay/decode` shows it: read and printed at one scale, the payable
 * asset's when there is one (as a payment reads it, so decode refuses what payment would refuse),
 * else the currency's. Never rounded.
 */
export function qrAmountText(decoded: DecodedQr, assetScale: number | undefined): string | null {
  const scale = assetScale ?? decoded.currencyScale;
  const amount = qrAmountMinor(decoded, scale);
  return amount === null ? null : formatAmount(amount, scale);
}

/**
 * The amount a payment debits, in minor units at the asset's scale: the caller's `amount` must
 * equal the QR's when the QR has one, and is required when it has none; never zero or less.
 */
export function amountToPay(decoded: DecodedQr, scale: number, requested: string | undefined): bigint {
  const qrAmount = qrAmountMinor(decoded, scale);
  let amount: bigint;
  if (requested !== undefined) {
    amount = parseAmount(requested, scale);
    if (qrAmount !== null && amount !== qrAmount) {
      throw new ApiError(
        'invalid_request',
        `amount must equal the QR code's amount (${formatAmount(qrAmount, scale)}).`,
      );
    }
  } else if (qrAmount !== null) {
    amount = qrAmount;
  } else {
    throw new ApiError('invalid_request', 'amount is required: the QR code carries no amount.');
  }
  if (amount <= 0n) throw new ApiError('invalid_request', 'amount must be greater than zero.');
  return amount;
}
