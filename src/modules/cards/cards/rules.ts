/** Pure rules of the card record (docs/cards.md): its expiry as the member reads it. */

/** A card's expiry as the member reads it from the card: `MM/YY`. */
export function expiryText(month: number, year: number): string {
  return `${String(month).padStart(2, '0')}/${String(year % 100).padStart(2, '0')}`;
}

export const expiryShape = '^(0[1-9]|1[0-2])/[0-9]{2}$';
