import { ApiError } from '../../platform/errors.js';
import { formatAmount, parseAmount } from '../../money/index.js';
import { addressMatches, usableNetwork, type Asset } from '../assets/index.js';
import { addressChecksumValid } from './address-rules.js';

/** The rules a withdrawal's own fields must meet, decided before any row is read. */

export interface WithdrawalInput {
  asset: string;
  network: string;
  address: string;
  amount: string;
}

/** What a withdrawal's own fields decide before any row is read: the asset, its network, the amount, the address's
 * shape. */
export function checkWithdrawal(input: WithdrawalInput, asset: Asset | undefined) {
  const network = usableNetwork(asset, input.network.toUpperCase());
  if (!asset || !network) throw new ApiError('asset_not_allowed');
  const amount = parseAmount(input.amount, asset.scale);
  if (amount <= 0n) throw new ApiError('invalid_request', 'amount must be greater than zero.');
  if (amount < network.withdrawalMin)
    throw new ApiError(
      'amount_out_of_range',
      `The minimum withdrawal is ${formatAmount(network.withdrawalMin, asset.scale)} ${asset.code}.`,
    );
  // Malformed (shape or checksum) or on another chain; blacklisted and own addresses are read below.
  if (!addressMatches(network, input.address) || !addressChecksumValid(network.network, input.address))
    throw new ApiError('address_not_allowed');
  return { asset, network, amount };
}
