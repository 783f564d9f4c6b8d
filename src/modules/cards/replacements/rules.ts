/** Pure rules of card replacements (docs/cards.md): their fees and the asset that pays them. */

/**
 * The fees of a replacement in card-currency minor units (the product's settings): a security
 * reason pays the replacement fee, plus postage for a physical card; a non-security reason
 * (the issuer's or the post's fault) pays nothing.
 */
export function replacementFees(
  product: { replacementFee: bigint; postageFee: bigint; formFactor: 'virtual' | 'physical' },
  security: boolean,
): { replacement: bigint; postage: bigint } {
  if (!security) return { replacement: 0n, postage: 0n };
  return { replacement: product.replacementFee, postage: product.formFactor === 'physical' ? product.postageFee : 0n };
}

/**
 * The source asset the replacement fees are taken in: the card's application's source asset
 * when its available balance covers the fee, else the first of the product's source assets that
 * does (the products' source assets are USD stablecoins, taken 1:1, `feeInSource`). Undefined when
 * none does.
 */
export function replacementFeeAsset(
  preferred: string,
  productSources: readonly string[],
  canPay: (asset: string) => boolean,
): string | undefined {
  const order = [preferred, ...productSources.filter((a) => a !== preferred)];
  return order.find(canPay);
}
