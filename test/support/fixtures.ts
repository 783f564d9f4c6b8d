import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { MerchantWalletClient } from '@merchant-wallet/sdk';
import type { RunningService } from '../../src/server.js';
import type { Kysely, Selectable, Updateable } from 'kysely';
import type { Database } from '../../src/db/schema.js';
import { assertEntry, type EntryLine } from '../../src/money/index.js';
import type { FieldSpec } from '../../src/modules/remittance/corridors/contracts.js';
import { defaultCorridors } from '../../src/db/migrations/016_remittance.js';
import { SimulatedMarket } from '../../src/upstreams/rates/simulator.js';
import { admin, newMerchantClient } from './service.js';
import type { Asset } from '../../src/modules/assets/index.js';
import { expectCode } from './expect.js';

/**
 * The small builders test files share: one definition each (issue 38, point 4). The service and
 * its merchant client come from `useTestService()` (support/service.ts).
 */

/** A valid TRON address, the destination of the tests' withdrawals. */
export const TRON = 'TJCnKsPa7y5okkXvQAidZBzqx3QyQ6sxMW';

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

/** Amount strings the amount grammar refuses as malformed: signs, exponents, spaces, separators, other digits. */
export const malformedAmounts = [
  '',
  ' ',
  '-1',
  '+1',
  '.5',
  '5.',
  '1e3',
  '1E3',
  ' 1',
  '1 ',
  '1,5',
  '1.2.3',
  '0x10',
  'NaN',
  'Infinity',
  '١',
  '1_000',
  '\t1',
  '1\n',
];

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

/** A new merchant (its client) and a member of it with `amount` of `asset` deposited (`fundedMember`). */
export async function merchantWithMember(
  service: RunningService,
  amount = '100',
  asset = 'USDT',
  options: FundedMemberOptions = {},
) {
  const { client, merchantId } = await newMerchantClient(service);
  return { client, merchantId, m: await fundedMember(client, amount, asset, options) };
}

/** POST /v1/members for `external` under idempotency key `key` (`false`: none), answered raw. */
export const postMember = (client: MerchantWalletClient, external: string, key: string | false = randomUUID()) =>
  client.requestRaw({
    method: 'POST',
    path: '/v1/members',
    body: { external_member_id: external },
    idempotencyKey: key,
  });

/** The events recorded about an object (`object_id`), in the order they were written: the `columns` named. */
export const eventsAbout = <C extends keyof Database['events'] & string>(
  service: RunningService,
  objectId: string,
  columns: C[],
) => service.ctx.db.selectFrom('events').select(columns).where('object_id', '=', objectId).orderBy('seq').execute();

/** A row of `table` by its id, every column, read straight from the database (`not_found`: it throws). */
export const rowById = <T extends keyof Database & string>(service: RunningService, table: T, id: string) =>
  (service.ctx.db as unknown as Kysely<any>)
    .selectFrom(table)
    .selectAll()
    .where('id', '=', id)
    .executeTakeFirstOrThrow() as Promise<Selectable<Database[T]>>;

/** The kinds of the journal entries posted for an object (`reference_id`), sorted. */
export const entryKinds = async (service: RunningService, referenceId: string) =>
  (await service.ctx.db.selectFrom('journal_entries').select('kind').where('reference_id', '=', referenceId).execute())
    .map((e) => e.kind)
    .sort();

/**
 * A new merchant (its client) and a member of it holding `usdt` USDT (external id `<prefix>-…`), with the
 * merchant's earn products: the flexible one and the fixed-term one.
 */
export async function earnSetup(service: RunningService, usdt = '2000', prefix = 'e') {
  const { client, merchantId } = await newMerchantClient(service);
  const member = await fundedMember(client, usdt, 'USDT', { prefix, txHashPrefix: 't-' });
  const products = await client.earn.products();
  const flexible = products.find((p) => p.type === 'flexible')!;
  const fixed = products.find((p) => p.type === 'fixed')!;
  /** The member subscribes `amount` to `product`. */
  const subscribe = (product: { id: string }, amount: string) =>
    client.earn.subscribe({ product_id: product.id, amount }, { onBehalfOf: member.external });
  return { client, merchantId, m: member.external, memberId: member.id, flexible, fixed, subscribe };
}

/** The member's balance line of `asset`. */
export const balanceOf = async (client: MerchantWalletClient, member: string, asset = 'USDT') =>
  ((await client.balances.list({ onBehalfOf: member })) as any[]).find((b) => b.asset === asset);

/** A member's balance line of `asset` holding `amount` (a decimal string in the asset's scale), all of it available. */
export const availableOnly = (asset: string, amount: string) => {
  const zero = amount.replace(/^\d+/, '0').replace(/\d/g, '0'); // '12.500000' -> '0.000000'
  return { asset, available: amount, frozen: zero, withdrawing: zero, earn: zero, card: zero, total: amount };
};

/** An operator's adjustment of the merchant's sandbox USDT custody, for `reason`: the admin API's answer. */
export const adjustCustody = (
  service: RunningService,
  merchantId: string,
  direction: 'increase' | 'decrease',
  amount: string,
  reason: string,
) =>
  admin(service, 'POST', `/admin/v1/merchants/${merchantId}/custody-adjustments`, {
    environment: 'sandbox',
    asset: 'USDT',
    amount,
    direction,
    reason,
  });

/** The merchant's custody line of `asset`. */
export const custodyOf = async (client: MerchantWalletClient, asset = 'USDT') =>
  ((await client.merchant.balances()) as any[]).find((b) => b.asset === asset);

/** Every item of a paginated listing (the SDK's async iterables), in order. */
export async function all<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

export interface KycMemberOptions {
  /** The member's external id (default: `<prefix>-` and eight random characters). */
  external?: string;
  /** Of the generated external id (default `m`). */
  prefix?: string;
  /** The KYC level the operator approves (default 1; 0: no review). */
  level?: number;
  /** Deposited after the review, asset → amount (default 100 USDT; `{}`: nothing). */
  deposits?: Record<string, string>;
}

/** A new member of the client's merchant, its KYC approved by the operator, with deposits (by default 100 USDT). */
export async function kycMember(
  service: RunningService,
  client: MerchantWalletClient,
  options: KycMemberOptions = {},
): Promise<{ id: string; external: string }> {
  const external = options.external ?? `${options.prefix ?? 'm'}-${randomUUID().slice(0, 8)}`;
  const member = (await client.members.create({ external_member_id: external })) as { id: string };
  const level = options.level ?? 1;
  if (level > 0)
    await admin(service, 'POST', `/admin/v1/members/${member.id}/kyc-review`, { decision: 'approved', level });
  for (const [asset, amount] of Object.entries(options.deposits ?? { USDT: '100' }))
    await client.deposits.create({ member_id: external, asset, amount, tx_hash: `t-${randomUUID()}` });
  return { id: member.id, external };
}

/** The sandbox's card products: the virtual one and the physical one. */
export async function cardProducts(client: MerchantWalletClient) {
  const list = await client.cards.products();
  return {
    virtual: list.find((p) => p.form_factor === 'virtual')!,
    physical: list.find((p) => p.form_factor === 'physical')!,
  };
}

/** Member `m`'s application for a card (fee in `sourceAsset`, default USDT), approved in the sandbox: the card's id. */
export async function approvedCard(
  client: MerchantWalletClient,
  m: string,
  options: { formFactor?: 'virtual' | 'physical'; sourceAsset?: string } = {},
): Promise<string> {
  const formFactor = options.formFactor ?? 'virtual';
  const product = (await cardProducts(client))[formFactor];
  const app = await client.cards.apply(
    {
      product_id: product.id,
      source_asset: options.sourceAsset ?? 'USDT',
      ...(formFactor === 'physical' ? { shipping_address: shipping } : {}),
    },
    { onBehalfOf: m },
  );
  return (await client.cards.sandboxAdvanceApplication(app.id, 'approved')).card_id!;
}

/** Runs `f` with the client's sandbox `upstream` (card, remittance, qrpay...) answering `behavior`, then `success`. */
export async function withUpstream<T>(
  client: MerchantWalletClient,
  upstream: string,
  behavior: string,
  f: () => Promise<T>,
): Promise<T> {
  await client.sandbox.presetUpstreamBehavior({ upstream, behavior });
  try {
    return await f();
  } finally {
    await client.sandbox.presetUpstreamBehavior({ upstream, behavior: 'success' });
  }
}

/**
 * Sets `values` straight in the row of `table` with this id: a state the API would take several steps or a wait to
 * reach (work made due now, a card past its expiry).
 */
export const setRow = <T extends keyof Database & string>(
  service: RunningService,
  table: T,
  id: string,
  values: Updateable<Database[T]>,
) =>
  (service.ctx.db as unknown as Kysely<any>)
    .updateTable(table as string)
    .set(values)
    .where('id', '=', id)
    .execute();

/** Sets a card's status straight in its row (a state the API would take several steps to reach). */
export const setCardStatus = (service: RunningService, cardId: string, status: string) =>
  setRow(service, 'cards', cardId, { status: status as 'closed' });

/** Patches every sandbox card product through the operator API. */
export async function patchCardProducts(service: RunningService, patch: Record<string, unknown>) {
  for (const p of (await admin(service, 'GET', '/admin/v1/cards/products?environment=sandbox')).body.data) {
    const res = await admin(service, 'PATCH', `/admin/v1/cards/products/${p.id}`, patch);
    assert.equal(res.status, 200, JSON.stringify(res.body));
  }
}

/** A card's expiry as the activation asks for it: `MM/YY`. */
export const expiryOf = (c: { exp_month: number; exp_year: number }) =>
  `${String(c.exp_month).padStart(2, '0')}/${String(c.exp_year % 100).padStart(2, '0')}`;

/** The open `upstream.unknown_status` operator alerts about an object. */
export const unknownStatusAlerts = async (service: RunningService, objectId: string) =>
  (await admin(service, 'GET', '/admin/v1/alerts?kind=upstream.unknown_status&limit=100')).body.data.filter(
    (a: { object_id: string }) => a.object_id === objectId,
  );

/** The ledger's own entry rules applied to `lines` in `asset` (a sandbox entry of a made-up merchant and reference). */
export const checkedEntry = (asset: string, lines: EntryLine[]) =>
  assertEntry({
    environment: 'sandbox',
    merchantId: 'mch_1',
    kind: 'k',
    referenceType: 'r',
    referenceId: 'x',
    asset,
    lines,
  });

/** Net change of the members' holdings in an entry's lines (credits less debits). */
export const memberNet = (lines: EntryLine[]) =>
  lines
    .filter((l) => l.account.owner === 'member')
    .reduce((s, l) => s + (l.side === 'credit' ? l.amount : -l.amount), 0n);

/** The payee contract (its fields) of a default corridor, for an individual unless told. */
export const contractOf = (country: string, clearing: string, entity: 'INDIVIDUAL' | 'COMPANY' = 'INDIVIDUAL') =>
  defaultCorridors.find((c) => c.country === country && c.clearing_system === clearing)!.contracts[
    entity
  ] as unknown as FieldSpec[];

/** A required field of a corridor contract: `key`, shown as `label`, of `type`, at most `maxLength` long; `more`. */
export const requiredField = (key: string, label: string, type: string, maxLength: number, more: object = {}) => ({
  key,
  label,
  type,
  required: true,
  max_length: maxLength,
  ...more,
});

/** The account holder's name, the first field of the contracts the tests make. */
export const holderField = requiredField('bank_details.account_holder', 'Holder', 'text', 140);

/** The days of a conversion calendar from `first` (YYYY-MM-DD) on, one a day, each valid as `valid` says in turn. */
export const daysFrom = (first: string, valid: boolean[]) =>
  valid.map((v, i) => ({
    date: new Date(Date.parse(`${first}T00:00:00Z`) + i * 86_400_000).toISOString().slice(0, 10),
    valid: v,
  }));

/** The keys of the fields named by the 400 `invalid_fields` that `call` is refused with, in the answer's order. */
export async function invalidFieldKeys(call: Promise<unknown>): Promise<string[]> {
  const err = await expectCode(call, 'invalid_fields');
  return (err.body.fields as { key: string }[]).map((f) => f.key);
}

/** The simulated market at its default prices with one clock, read at each call, for every caller and for real time. */
export const simulatedMarketOn = (clock: () => Date) => new SimulatedMarket(undefined, async () => clock(), clock);

/** A promise (`passed`) that settles once `open()` is called: a gate to hold a call at, or a signal to wait for. */
export function latch(): { passed: Promise<void>; open: () => void } {
  let open!: () => void;
  const passed = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { passed, open };
}

/** A catalogue USDT as the assets area holds it (pure rules' tests): TRON enabled, ETHEREUM disabled. */
export const catalogueUsdt: Asset = {
  code: 'USDT',
  scale: 6,
  type: 'crypto',
  enabled: true,
  networks: [
    {
      network: 'TRON',
      enabled: true,
      withdrawalFee: 1_000_000n,
      withdrawalMin: 10_000_000n,
      addressPattern: '^T[1-9A-HJ-NP-Za-km-z]{33}$',
    },
    {
      network: 'ETHEREUM',
      enabled: false,
      withdrawalFee: 5_000_000n,
      withdrawalMin: 20_000_000n,
      addressPattern: '^0x[0-9a-fA-F]{40}$',
    },
  ],
};
