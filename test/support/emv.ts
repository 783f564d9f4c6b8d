import { crc16 } from '../../src/modules/qrpay/emvco.js';

/** A compact EMVCo merchant-presented QR encoder for tests (test/emvco.test.ts checks the CRC independently). */
export type Field = [string, string | Field[]];

export const tlv = ([id, v]: Field): string => {
  const value = typeof v === 'string' ? v : v.map(tlv).join('');
  return `${id}${String(Array.from(value).length).padStart(2, '0')}${value}`;
};

export const emv = (fields: Field[]): string => {
  const body = `${fields.map(tlv).join('')}6304`;
  return body + crc16(body);
};

export function payNow(opts: { amount?: string; uen?: string; name?: string } = {}): string {
  return emv([
    ['00', '01'],
    ['01', opts.amount ? '12' : '11'],
    [
      '26',
      [
        ['00', 'SG.PAYNOW'],
        ['01', '2'],
        ['02', opts.uen ?? '201403121W'],
        ['03', '1'],
      ],
    ],
    [
      '51',
      [
        ['00', 'SG.SGQR'],
        ['01', '180307A1B2C3'],
      ],
    ],
    ['52', '5812'],
    ['53', '702'],
    ...(opts.amount ? [['54', opts.amount] as Field] : []),
    ['58', 'SG'],
    ['59', opts.name ?? 'KOPI CORNER'],
    ['60', 'Singapore'],
    ['62', [['05', 'ORDER42']]],
  ]);
}
