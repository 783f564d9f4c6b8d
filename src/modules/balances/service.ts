import type { Transaction } from 'kysely';
import type { Database, Environment } from '../../db/schema.js';
import { ApiError } from '../../platform/errors.js';
import { newId } from '../../platform/ids.js';
import {
  entryKinds,
  formatAmount,
  parseAmount,
  platformAccount,
  postEntry,
  postEntryOrRefuse,
  prepaidCreditLines,
} from '../../money/index.js';
import { getAsset } from '../assets/index.js';
import { getMerchant } from '../merchants/index.js';
import { insertCustodyAdjustment, insertPrepaidCredit, merchantBalances } from './queries.js';

/**
 * The operator's movements of a merchant's own balances: prepaid credits and custody adjustments,
 * each in the caller's transaction (the operator route's `write`), balance read included.
 */

export async function creditPrepaid(
  trx: Transaction<Database>,
  merchantId: string,
  input: { environment: Environment; asset: string; amount: string },
): Promise<{ asset: string; prepaid_available: string }> {
  await getMerchant(trx, merchantId);
  const asset = await getAsset(trx, input.asset.toUpperCase());
  if (!asset || !asset.enabled) throw new ApiError('asset_not_allowed');
  const amount = parseAmount(input.amount, asset.scale);
  if (amount <= 0n) throw new ApiError('invalid_request', 'amount must be greater than zero.');
  const credit = await insertPrepaidCredit(trx, {
    id: newId('ppc'),
    merchant_id: merchantId,
    environment: input.environment,
    asset: asset.code,
    amount: amount.toString(),
  });
  await postEntry(trx, {
    environment: input.environment,
    merchantId,
    kind: entryKinds.prepaidCredit,
    referenceType: 'prepaid_credit',
    referenceId: credit.id,
    asset: asset.code,
    lines: prepaidCreditLines({ merchantId, amount }),
  });
  const balance = (await merchantBalances(trx, input.environment, merchantId)).find((b) => b.asset === asset.code);
  return { asset: asset.code, prepaid_available: balance?.prepaid_available ?? formatAmount(0n, asset.scale) };
}

/**
 * Reconciles the recorded custody with what the merchant really holds (for example funds the
 * merchant moved off the platform): custody against the platform's settlement clearing account
 * kept for the merchant.
 */
export async function adjustCustody(
  trx: Transaction<Database>,
  merchantId: string,
  input: {
    environment: Environment;
    asset: string;
    amount: string;
    direction: 'increase' | 'decrease';
    reason: string;
  },
): Promise<{ id: string; asset: string; custody: string }> {
  await getMerchant(trx, merchantId);
  const asset = await getAsset(trx, input.asset.toUpperCase());
  if (!asset) throw new ApiError('asset_not_allowed');
  const amount = parseAmount(input.amount, asset.scale);
  if (amount <= 0n) throw new ApiError('invalid_request', 'amount must be greater than zero.');
  const custody = { owner: 'merchant' as const, merchantId, bucket: 'custody' as const };
  const clearing = platformAccount('settlement_clearing', merchantId);
  const increase = input.direction === 'increase';
  const id = newId('cad');
  await insertCustodyAdjustment(trx, {
    id,
    merchant_id: merchantId,
    environment: input.environment,
    asset: asset.code,
    amount: amount.toString(),
    direction: input.direction,
    reason: input.reason,
  });
  await postEntryOrRefuse(trx, {
    environment: input.environment,
    merchantId,
    kind: 'custody.adjustment',
    referenceType: 'custody_adjustment',
    referenceId: id,
    asset: asset.code,
    lines: [
      { account: custody, side: increase ? 'debit' : 'credit', amount },
      { account: clearing, side: increase ? 'credit' : 'debit', amount },
    ],
  });
  const balance = (await merchantBalances(trx, input.environment, merchantId)).find((b) => b.asset === asset.code);
  return { id, asset: asset.code, custody: balance?.custody ?? formatAmount(0n, asset.scale) };
}

// Balance monitors (monitors.ts), for the console.
export { createMonitor, deleteMonitor, getMonitor, listMonitors } from './monitors.js';
