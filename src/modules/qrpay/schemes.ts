import type { DecodedQr, MerchantAccount } from './emvco.js';

/** A QR payment scheme the service recognises, by the GUIDs of its merchant account template. */
export interface QrScheme {
  id: string;
  name: string;
  country: string;
  /** ISO 4217 alphabetic; the scheme is payable when an enabled asset of the catalogue has this code. */
  currency: string;
  /** Globally unique identifiers (sub-field 00 of a 26-51 template), upper case. */
  guids: readonly string[];
}

/**
 * The schemes we decode. Container templates that identify a QR rather than a payment rail
 * (`SG.SGQR`) are not schemes: an SGQR code is paid through the rail it carries (PayNow, NETS).
 */
export const qrSchemes: readonly QrScheme[] = [
  { id: 'sg_paynow', name: 'PayNow', country: 'SG', currency: 'SGD', guids: ['SG.PAYNOW'] },
  { id: 'sg_nets', name: 'NETS (SGQR)', country: 'SG', currency: 'SGD', guids: ['SG.COM.NETS'] },
  { id: 'hk_fps', name: 'FPS', country: 'HK', currency: 'HKD', guids: ['HK.COM.HKICL'] },
  { id: 'my_duitnow', name: 'DuitNow', country: 'MY', currency: 'MYR', guids: ['COM.DUITNOW', 'MY.COM.PAYNET'] },
  {
    id: 'th_promptpay',
    name: 'PromptPay',
    country: 'TH',
    currency: 'THB',
    guids: ['A000000677010111', 'A000000677010112'],
  },
  { id: 'id_qris', name: 'QRIS', country: 'ID', currency: 'IDR', guids: ['ID.CO.QRIS.WWW'] },
];

export function schemeById(id: string): QrScheme | undefined {
  return qrSchemes.find((s) => s.id === id);
}

/** The first merchant account template (in field order) whose GUID names a scheme we know. */
export function schemeOf(decoded: DecodedQr): { scheme: QrScheme; account: MerchantAccount } | undefined {
  for (const account of decoded.merchantAccounts) {
    if (!account.guid) continue;
    const scheme = qrSchemes.find((s) => s.guids.includes(account.guid));
    if (scheme) return { scheme, account };
  }
  return undefined;
}
