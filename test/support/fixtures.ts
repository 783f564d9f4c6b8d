import { randomUUID } from 'node:crypto';
import type { MerchantWalletClient } from '@merchant-wallet/sdk';

/**
 * The small builders test files share: one definition each (issue 38, point 4). The service and
 * its merchant client come from `useTestService()` (support/service.ts).
 */

/** The SEPA corridor's contract: a payee of it, an order on it. */
export const sepa = {
  country_code: 'DE',
  currency: 'EUR',
  payment_method: 'LOCAL',
  clearing_system: 'SEPA',
  entity_type: 'INDIVIDUAL',
};
/** A German payee's address fields. */
export const payeeAddress = {
  'address.country': 'DE',
  'address.city': 'Berlin',
  'address.street_address': 'Unter den Linden 1',
  'address.postal_code': '10117',
};
/** A card's shipping address. */
export const shipping = { address: '1 Main St', city: 'Berlin', country: 'DE', postal_code: '10115' };

/** A fresh valid German IBAN, with valid check digits (ISO 13616: mod 97), unique per call: tests never collide on a
 * shared payee. */
export function freshIban(): string {
  const bban = `37040044${String(Math.floor(Math.random() * 1e10)).padStart(10, '0')}`;
  const n = BigInt(`${bban}131400`); // D=13 E=14, "00" check digits
  return `DE${String(98n - (n % 97n)).padStart(2, '0')}${bban}`;
}

/** The body of a new SEPA payee with a fresh IBAN. */
export const sepaPayee = (firstName = 'Anna', lastName = 'Müller') => ({
  ...sepa,
  fields: { first_name: firstName, last_name: lastName, 'bank_details.iban': freshIban(), ...payeeAddress },
});

export interface FundedMemberOptions {
  /** The member's external id (default: `<prefix>-` and eight random characters). */
  external?: string;
  /** Of the generated external id (default `m`). */
  prefix?: string;
  /** Of the deposit's tx_hash, before a random UUID (default `0x`; a bank transfer's `bank-`). */
  txHashPrefix?: string;
}

/** A new member of the client's merchant with `amount` of `asset` deposited. */
export async function fundedMember(
  client: MerchantWalletClient,
  amount = '100',
  asset = 'USDT',
  options: FundedMemberOptions = {},
): Promise<{ id: string; external: string }> {
  const external = options.external ?? `${options.prefix ?? 'm'}-${randomUUID().slice(0, 8)}`;
  const member = (await client.members.create({ external_member_id: external })) as { id: string };
  await client.deposits.create({
    member_id: external,
    asset,
    amount,
    tx_hash: `${options.txHashPrefix ?? '0x'}${randomUUID()}`,
  });
  return { id: member.id, external };
}

/** The member's balance line of `asset`. */
export const balanceOf = async (client: MerchantWalletClient, member: string, asset = 'USDT') =>
  ((await client.balances.list({ onBehalfOf: member })) as any[]).find((b) => b.asset === asset);

/** The merchant's custody line of `asset`. */
export const custodyOf = async (client: MerchantWalletClient, asset = 'USDT') =>
  ((await client.merchant.balances()) as any[]).find((b) => b.asset === asset);

/** Every item of a paginated listing (the SDK's async iterables), in order. */
export async function all<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}
