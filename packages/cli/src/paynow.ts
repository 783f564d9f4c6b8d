/**
 * A merchant-presented EMVCo QR code of Singapore's PayNow, as a shop's sticker carries it (for `mwa trigger qrpay.*`).
 */

const tlv = (id: string, value: string) => `${id}${String(value.length).padStart(2, '0')}${value}`;

/** CRC-16/CCITT-FALSE over the payload up to and including `6304`, as EMVCo specifies. */
export function crc16(text: string): string {
  let crc = 0xffff;
  for (const byte of Buffer.from(text, 'utf8')) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc.toString(16).toUpperCase().padStart(4, '0');
}

export function payNowQr(amount: string, merchantName = 'MWA TRIGGER SHOP'): string {
  const account = tlv('00', 'SG.PAYNOW') + tlv('01', '2') + tlv('02', '201403121W') + tlv('03', '1');
  const body =
    tlv('00', '01') +
    tlv('01', '12') +
    tlv('26', account) +
    tlv('52', '5812') +
    tlv('53', '702') +
    tlv('54', amount) +
    tlv('58', 'SG') +
    tlv('59', merchantName) +
    tlv('60', 'Singapore') +
    '6304';
  return body + crc16(body);
}
