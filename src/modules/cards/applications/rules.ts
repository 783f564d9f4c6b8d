/**
 * Pure rules of card applications (docs/cards.md): the opening fee in the source asset (its
 * posting rules: src/money/posting-rules/cards.ts).
 */

export const cardReferenceType = 'card_application';

/**
 * The opening fee (card-currency minor units) in a source asset's minor units: the products' source
 * assets are USD stablecoins, taken 1:1; the conversion rounds up when the asset has fewer places.
 */
export function feeInSource(feeMinor: bigint, cardScale: number, sourceScale: number): bigint {
  if (sourceScale >= cardScale) return feeMinor * 10n ** BigInt(sourceScale - cardScale);
  const d = 10n ** BigInt(cardScale - sourceScale);
  return (feeMinor + d - 1n) / d;
}
