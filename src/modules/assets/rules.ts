import { ApiError } from '../../platform/errors.js';
import { formatAmount } from '../../money/index.js';
import type { AssetType } from '../../money/index.js';

/** An asset of the catalogue with its withdrawal networks (amounts in minor units). */
export interface Asset {
  code: string;
  scale: number;
  type: AssetType;
  enabled: boolean;
  networks: AssetNetwork[];
}

export interface AssetNetwork {
  network: string;
  enabled: boolean;
  withdrawalFee: bigint;
  withdrawalMin: bigint;
  /** A regular expression a withdrawal address on this network must match. */
  addressPattern: string;
}

export const assetTypes = ['crypto', 'fiat'] as const;
/** Same rules as the CHECK constraints of the tables. */
export const assetCodePattern = '^[A-Z0-9]{2,16}$';
export const networkCodePattern = '^[A-Z0-9_]{2,32}$';
export const addressPatternLengthMax = 512;

/** Checks that an operator's address pattern is a usable regular expression; returns it. */
export function checkAddressPattern(pattern: string): string {
  if (pattern.length === 0 || pattern.length > addressPatternLengthMax) {
    throw new ApiError('invalid_request', `address_pattern must have 1 to ${addressPatternLengthMax} characters.`);
  }
  try {
    new RegExp(pattern);
  } catch {
    throw new ApiError('invalid_request', 'address_pattern is not a valid regular expression.');
  }
  return pattern;
}

const compiled = new Map<string, RegExp>();
const compiledMax = 256;

/** Whether `address` matches a network's pattern (compiled patterns are kept, up to a bound). */
export function addressMatches(network: Pick<AssetNetwork, 'addressPattern'>, address: string): boolean {
  let re = compiled.get(network.addressPattern);
  if (!re) {
    re = new RegExp(network.addressPattern);
    if (compiled.size >= compiledMax) compiled.clear();
    compiled.set(network.addressPattern, re);
  }
  return re.test(address);
}

/** The enabled network of an enabled asset, or undefined. */
export function usableNetwork(asset: Asset | undefined, network: string): AssetNetwork | undefined {
  if (!asset || !asset.enabled) return undefined;
  return asset.networks.find((n) => n.network === network && n.enabled);
}

/** `GET /v1/assets` item: enabled networks only, by name. */
export function publicAssetView(asset: Asset) {
  return {
    code: asset.code,
    scale: asset.scale,
    type: asset.type,
    networks: asset.networks.filter((n) => n.enabled).map((n) => n.network),
  };
}

/** Operator view: everything, amounts as decimal strings at the asset's scale. */
export function operatorAssetView(asset: Asset) {
  return {
    code: asset.code,
    scale: asset.scale,
    type: asset.type,
    enabled: asset.enabled,
    networks: asset.networks.map((n) => ({
      network: n.network,
      enabled: n.enabled,
      withdrawal_fee: formatAmount(n.withdrawalFee, asset.scale),
      withdrawal_min: formatAmount(n.withdrawalMin, asset.scale),
      address_pattern: n.addressPattern,
    })),
  };
}
