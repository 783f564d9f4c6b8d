/**
 * EMVCo merchant-presented QR (MPM) decoding: pure, no I/O.
 *
 * A payload is a run of TLV fields: ID (2 digits), length (2 digits, the number of characters of
 * the value), value. Templates nest the same form: merchant account information 26-51,
 * additional data 62, language template 64, unreserved templates 80-99. The payload starts with
 * `000201` (payload format indicator "01") and ends with the CRC field `6304XXXX`: CRC-16/CCITT-
 * FALSE (poly 0x1021, init 0xFFFF, no reflection, no final XOR) over every character before the
 * four hex digits, "6304" included.
 */

/** EMVCo's limit on the whole payload, in characters. */
export const payloadLengthMax = 512;
/** Bound on the fields of one level (the top level has about 20; IDs are 00-99). */
export const fieldsPerLevelMax = 100;

export type EmvcoProblem =
  | 'not_emv'
  | 'too_long'
  | 'malformed_tlv'
  | 'truncated'
  | 'duplicate_field'
  | 'crc_missing'
  | 'crc_mismatch'
  | 'format_indicator'
  | 'missing_field'
  | 'bad_field'
  | 'unknown_currency';

export class EmvcoError extends Error {
  override readonly name = 'EmvcoError';
  constructor(
    readonly problem: EmvcoProblem,
    message: string,
  ) {
    super(message);
  }
}

export interface TlvField {
  id: string;
  value: string;
  /** Parsed sub-fields of a template (26-51, 62, 64, 80-99). */
  children?: TlvField[];
}

/** CRC-16/CCITT-FALSE of the UTF-8 bytes of `text`, as four upper-case hex digits. */
export function crc16(text: string): string {
  let crc = 0xffff;
  for (const byte of Buffer.from(text, 'utf8')) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc.toString(16).toUpperCase().padStart(4, '0');
}

const isTemplate = (id: string) => {
  const n = Number(id);
  return (n >= 26 && n <= 51) || n === 62 || n === 64 || (n >= 80 && n <= 99);
};

/** Parses one level of TLV fields; `nested` parses templates one level down. Throws EmvcoError. */
export function parseTlv(text: string, nested = true): TlvField[] {
  const chars = Array.from(text);
  const fields: TlvField[] = [];
  const seen = new Set<string>();
  let i = 0;
  while (i < chars.length) {
    if (fields.length >= fieldsPerLevelMax) throw new EmvcoError('malformed_tlv', 'Too many fields.');
    if (i + 4 > chars.length) throw new EmvcoError('truncated', 'A field header is cut short.');
    const id = chars.slice(i, i + 2).join('');
    const len = chars.slice(i + 2, i + 4).join('');
    if (!/^\d{2}$/.test(id) || !/^\d{2}$/.test(len))
      throw new EmvcoError('malformed_tlv', `Field header "${id}${len}" is not two digits of ID and two of length.`);
    const length = Number(len);
    if (length === 0) throw new EmvcoError('malformed_tlv', `Field ${id} is empty.`);
    if (i + 4 + length > chars.length)
      throw new EmvcoError('truncated', `Field ${id} declares ${length} characters; fewer remain.`);
    if (seen.has(id)) throw new EmvcoError('duplicate_field', `Field ${id} appears twice.`);
    seen.add(id);
    const value = chars.slice(i + 4, i + 4 + length).join('');
    const field: TlvField = { id, value };
    if (nested && isTemplate(id)) field.children = parseTlv(value, false);
    fields.push(field);
    i += 4 + length;
  }
  return fields;
}

/** ISO 4217 numeric → alphabetic code and minor digits, for the currencies QR schemes use. */
export const iso4217: Readonly<Record<string, { code: string; scale: number }>> = {
  '036': { code: 'AUD', scale: 2 },
  '116': { code: 'KHR', scale: 2 },
  '156': { code: 'CNY', scale: 2 },
  '344': { code: 'HKD', scale: 2 },
  '356': { code: 'INR', scale: 2 },
  '360': { code: 'IDR', scale: 2 },
  '392': { code: 'JPY', scale: 0 },
  '410': { code: 'KRW', scale: 0 },
  '446': { code: 'MOP', scale: 2 },
  '458': { code: 'MYR', scale: 2 },
  '608': { code: 'PHP', scale: 2 },
  '702': { code: 'SGD', scale: 2 },
  '704': { code: 'VND', scale: 0 },
  '764': { code: 'THB', scale: 2 },
  '826': { code: 'GBP', scale: 2 },
  '840': { code: 'USD', scale: 2 },
  '901': { code: 'TWD', scale: 2 },
  '978': { code: 'EUR', scale: 2 },
};

export interface MerchantAccount {
  /** The template's field ID (02-51). */
  id: string;
  /** Sub-field 00 of a 26-51 template, upper-cased (e.g. `SG.PAYNOW`); '' for 02-25 (card networks). */
  guid: string;
  /** Sub-field 01 (PayNow: proxy type; FPS: FPS id ...) joined with 02 / 03 where present: the account identity. */
  account: string;
  fields: TlvField[];
}

export interface DecodedQr {
  pointOfInitiation: 'static' | 'dynamic' | null;
  merchantAccounts: MerchantAccount[];
  merchantCategoryCode: string;
  /** ISO 4217 alphabetic code. */
  currency: string;
  currencyScale: number;
  /** The amount exactly as written in the QR (field 54), or null for a static code without one. */
  amount: string | null;
  country: string;
  merchantName: string;
  merchantCity: string;
  postalCode: string | null;
  /** Field 62 sub-field 05 (reference label), else 01 (bill number). */
  reference: string | null;
}

const value = (fields: TlvField[], id: string) => fields.find((f) => f.id === id)?.value;

function required(fields: TlvField[], id: string, name: string): string {
  const v = value(fields, id);
  if (v === undefined) throw new EmvcoError('missing_field', `The QR has no ${name} (field ${id}).`);
  return v;
}

/**
 * Decodes and checks an EMVCo MPM payload. Throws EmvcoError for text that is not an EMVCo QR,
 * a TLV structure that does not hold, a wrong CRC, or a missing or malformed mandatory field.
 */
export function decodeEmvco(payload: string): DecodedQr {
  if (typeof payload !== 'string' || !payload.startsWith('000201')) {
    throw new EmvcoError('not_emv', 'This is not an EMVCo merchant-presented QR code.');
  }
  if (Array.from(payload).length > payloadLengthMax)
    throw new EmvcoError('too_long', `The QR payload exceeds ${payloadLengthMax} characters.`);
  const fields = parseTlv(payload);
  const last = fields[fields.length - 1]!;
  if (last.id !== '63' || !payload.slice(0, -4).endsWith('6304'))
    throw new EmvcoError('crc_missing', 'The QR does not end with its CRC field (63).');
  if (!/^[0-9A-Fa-f]{4}$/.test(last.value))
    throw new EmvcoError('crc_mismatch', 'The CRC field is not four hex digits.');
  if (crc16(payload.slice(0, -4)) !== last.value.toUpperCase())
    throw new EmvcoError('crc_mismatch', 'The QR checksum does not match its content.');
  if (fields[0]!.id !== '00' || fields[0]!.value !== '01')
    throw new EmvcoError('format_indicator', 'The payload format indicator must be "01".');

  const poi = value(fields, '01');
  if (poi !== undefined && poi !== '11' && poi !== '12')
    throw new EmvcoError('bad_field', 'The point of initiation method must be 11 or 12.');

  const merchantAccounts: MerchantAccount[] = fields
    .filter((f) => Number(f.id) >= 2 && Number(f.id) <= 51)
    .map((f) => {
      const sub = f.children ?? [];
      return {
        id: f.id,
        guid: f.children ? (value(sub, '00') ?? '').toUpperCase() : '',
        account: f.children
          ? ['01', '02', '03']
              .map((k) => value(sub, k))
              .filter((v) => v !== undefined)
              .join('|')
          : f.value,
        fields: sub,
      };
    });
  if (merchantAccounts.length === 0)
    throw new EmvcoError('missing_field', 'The QR has no merchant account information (fields 02-51).');

  const mcc = required(fields, '52', 'merchant category code');
  if (!/^\d{4}$/.test(mcc)) throw new EmvcoError('bad_field', 'The merchant category code must be four digits.');
  const numeric = required(fields, '53', 'transaction currency');
  if (!/^\d{3}$/.test(numeric))
    throw new EmvcoError('bad_field', 'The transaction currency must be an ISO 4217 numeric code.');
  const currency = iso4217[numeric];
  if (!currency) throw new EmvcoError('unknown_currency', `Currency ${numeric} is not supported.`);
  const amount = value(fields, '54') ?? null;
  if (amount !== null && (amount.length > 13 || !/^\d+(\.\d+)?$/.test(amount)))
    throw new EmvcoError('bad_field', 'The transaction amount is malformed.');
  const country = required(fields, '58', 'country code');
  if (!/^[A-Z]{2}$/.test(country)) throw new EmvcoError('bad_field', 'The country code must be two capital letters.');
  const merchantName = required(fields, '59', 'merchant name');
  if (Array.from(merchantName).length > 25)
    throw new EmvcoError('bad_field', 'The merchant name exceeds 25 characters.');
  const merchantCity = required(fields, '60', 'merchant city');
  if (Array.from(merchantCity).length > 15)
    throw new EmvcoError('bad_field', 'The merchant city exceeds 15 characters.');
  const additional = fields.find((f) => f.id === '62')?.children ?? [];

  return {
    pointOfInitiation: poi === '11' ? 'static' : poi === '12' ? 'dynamic' : null,
    merchantAccounts,
    merchantCategoryCode: mcc,
    currency: currency.code,
    currencyScale: currency.scale,
    amount,
    country,
    merchantName,
    merchantCity,
    postalCode: value(fields, '61') ?? null,
    reference: value(additional, '05') ?? value(additional, '01') ?? null,
  };
}
