import type { Address } from './tables.js';

/**
 * Pure rules several card sub-areas share (docs/cards.md): the address checks (an application's
 * shipping address, a card's billing address) and the references of a card that stops; its posting
 * rules (replacement, closing, expiry, its held amounts) are src/money/posting-rules/cards.ts.
 */

export type FieldProblem = { key: string; reason: string };

/** The address of a physical card's shipping or its billing address (ISO 3166-1 alpha-2 upper case; only the shape). */
export function addressProblems(a: Partial<Record<keyof Address, unknown>> | undefined, prefix = ''): FieldProblem[] {
  if (!a || typeof a !== 'object') return [{ key: prefix.replace(/\.$/, '') || 'address', reason: 'required' }];
  const out: FieldProblem[] = [];
  for (const k of ['address', 'city', 'postal_code'] as const) {
    if (typeof a[k] !== 'string' || (a[k] as string).trim() === '')
      out.push({ key: `${prefix}${k}`, reason: 'required' });
  }
  if (typeof a.country !== 'string' || a.country === '') out.push({ key: `${prefix}country`, reason: 'required' });
  else if (!/^[A-Z]{2}$/.test(a.country))
    out.push({ key: `${prefix}country`, reason: 'must be ISO 3166-1 alpha-2, upper case' });
  if (a.state !== undefined && (typeof a.state !== 'string' || a.state.trim() === ''))
    out.push({ key: `${prefix}state`, reason: 'omit where the country has none' });
  return out;
}

export function normaliseAddress(a: Address): Address {
  const out: Address = {
    address: a.address.trim(),
    city: a.city.trim(),
    country: a.country,
    postal_code: a.postal_code.trim(),
  };
  if (a.state !== undefined) out.state = a.state.trim();
  return out;
}

// ---------------------------------------------------------------------------------------------
// Replacement, closing and expiry (replacements/, closing/; docs/cards.md).

export const replacementReferenceType = 'card_replacement';
/** Closing and expiry return a card's balance under (`card`, `<card id>:close` / `<card id>:expiry`): each happens once
 * per card. */
export const cardReferenceTypeOfCard = 'card';
