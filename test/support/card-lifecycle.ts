/**
 * Helpers of the card lifecycle suites (test/cards-replacement.test.ts, test/cards-closing.test.ts):
 * members with money, cards opened through the API, a card balance made through the ledger module
 * (a USD deposit's available moved onto `card:<id>`, as a confirmed top-up would), and balances.
 */
import assert from 'node:assert/strict';
import { afterEach, before } from 'node:test';
import { randomUUID } from 'node:crypto';
import type { MerchantWalletClient } from '@merchant-wallet/sdk';
import type { RunningService } from '../../src/server.js';
import { accountBalance, depositLines, postEntry, verifyLedger } from '../../src/money/index.js';
import { approvedCard, kycMember } from './fixtures.js';
import { expectCode } from './expect.js';
import { newMerchantClient, useTestService, type TestServiceOptions, type TestServiceSetup } from './service.js';

/** The helpers for the service, client and merchant that `setup` answers when a helper runs (after `before`). */
export function lifecycleHelpers(
  setup: () => { service: RunningService; client: MerchantWalletClient; merchantId: string },
) {
  const service = () => setup().service;
  const client = () => setup().client;
  const merchantId = () => setup().merchantId;
  const db = () => service().ctx.db;
  /** A member at KYC level 1 holding `usdt` USDT ('0': nothing). */
  const member = (usdt = '100') =>
    kycMember(service(), client(), { prefix: 'l', deposits: usdt === '0' ? {} : { USDT: usdt } });
  /** An active card of `formFactor` of the member's (its record). */
  async function card(m: { external: string }, formFactor: 'virtual' | 'physical') {
    const cardId = await approvedCard(client(), m.external, { formFactor });
    return client().cards.get(cardId, { onBehalfOf: m.external });
  }
  /** Puts `cents` USD on the card: a USD deposit (custody and available) moved onto `card:<id>`, each one ledger entry.
   * */
  async function fundCard(m: { id: string }, cardId: string, cents: bigint) {
    await db()
      .transaction()
      .execute(async (trx) => {
        const ref = randomUUID();
        await postEntry(trx, {
          environment: 'sandbox',
          merchantId: merchantId(),
          kind: 'deposit',
          referenceType: 'test_deposit',
          referenceId: ref,
          asset: 'USD',
          lines: depositLines({ memberId: m.id, merchantId: merchantId(), amount: cents }),
        });
        await postEntry(trx, {
          environment: 'sandbox',
          merchantId: merchantId(),
          kind: 'test.card_fund',
          referenceType: 'test_card_fund',
          referenceId: ref,
          asset: 'USD',
          lines: [
            { account: { owner: 'member', memberId: m.id, bucket: 'available' }, side: 'debit', amount: cents },
            { account: { owner: 'member', memberId: m.id, bucket: 'card', cardId }, side: 'credit', amount: cents },
          ],
        });
      });
  }
  /** A new member (holding 100 USDT) and an active card of `formFactor` of theirs. */
  async function memberWithCard(formFactor: 'virtual' | 'physical' = 'virtual') {
    const m = await member();
    return { m, card: await card(m, formFactor) };
  }
  /** A new member (holding 100 USDT) with an active virtual card holding `cents` USD (through the ledger module, as a
   * credited top-up would). */
  async function fundedCard(cents: bigint) {
    const { m, card } = await memberWithCard('virtual');
    await fundCard(m, card.id, cents);
    return { m, card };
  }
  /** Moves `cents` of the card's balance to `card_held` (as an authorisation would). */
  async function hold(m: { id: string }, cardId: string, cents: bigint) {
    await db()
      .transaction()
      .execute(async (trx) => {
        await postEntry(trx, {
          environment: 'sandbox',
          merchantId: merchantId(),
          kind: 'test.card_hold',
          referenceType: 'test_card_hold',
          referenceId: randomUUID(),
          asset: 'USD',
          lines: [
            { account: { owner: 'member', memberId: m.id, bucket: 'card', cardId }, side: 'debit', amount: cents },
            {
              account: { owner: 'member', memberId: m.id, bucket: 'card_held', cardId },
              side: 'credit',
              amount: cents,
            },
          ],
        });
      });
  }
  const available = (m: { id: string }, asset: string) =>
    accountBalance(db(), 'sandbox', { owner: 'member', memberId: m.id, bucket: 'available' }, asset);
  const frozen = (m: { id: string }, asset: string) =>
    accountBalance(db(), 'sandbox', { owner: 'member', memberId: m.id, bucket: 'frozen' }, asset);
  const onCard = (m: { id: string }, cardId: string) =>
    accountBalance(db(), 'sandbox', { owner: 'member', memberId: m.id, bucket: 'card', cardId }, 'USD');
  const held = (m: { id: string }, cardId: string) =>
    accountBalance(db(), 'sandbox', { owner: 'member', memberId: m.id, bucket: 'card_held', cardId }, 'USD');
  const ledgerOk = async () => assert.deepEqual((await verifyLedger(db())).problems, []);
  /** Event types recorded for an object, in order. */
  const events = async (objectId: string) =>
    await db()
      .selectFrom('events')
      .select(['type', 'status', 'status_version'])
      .where('object_id', '=', objectId)
      .orderBy('created_at')
      .orderBy('status_version')
      .execute();
  const entries = async (kind: string, referenceId: string) =>
    (
      await db()
        .selectFrom('journal_entries')
        .select('id')
        .where('kind', '=', kind)
        .where('reference_id', '=', referenceId)
        .execute()
    ).length;
  return {
    member,
    card,
    memberWithCard,
    fundCard,
    fundedCard,
    hold,
    available,
    frozen,
    onCard,
    held,
    ledgerOk,
    events,
    entries,
  };
}

/**
 * `call` on a card answers 404 `not_found` to another member than its owner (`other`), and to its owner on a card
 * that does not exist.
 */
export async function expectOwnersCardOnly(
  call: (cardId: string, onBehalfOf: string) => Promise<unknown>,
  cardId: string,
  owner: string,
  other: string,
): Promise<void> {
  await expectCode(call(cardId, other), 'not_found', 404);
  await expectCode(call(`crd_${randomUUID()}`, owner), 'not_found', 404);
}

/**
 * In a describe: the service (started with `config`; its setup handed to `ready`) and the lifecycle helpers for its
 * merchant. Every test ends on a ledger that verifies.
 */
export function useLifecycleService(config: TestServiceOptions['config'], ready: (setup: TestServiceSetup) => void) {
  let setup: TestServiceSetup;
  useTestService({ config }, (s) => {
    setup = s;
    ready(s);
  });
  const h = lifecycleHelpers(() => setup);
  afterEach(() => h.ledgerOk());
  return h;
}

/**
 * In a describe: a merchant of its own on `service()`, made in `before` and handed to `assign`, and the
 * lifecycle helpers for it. Every test ends on a ledger that verifies.
 */
export function ownMerchantLifecycle(
  service: () => RunningService,
  assign: (own: { client: MerchantWalletClient; merchantId: string }) => void,
) {
  let own: { client: MerchantWalletClient; merchantId: string };
  before(async () => {
    own = await newMerchantClient(service());
    assign(own);
  });
  const h = lifecycleHelpers(() => ({ service: service(), ...own }));
  afterEach(() => h.ledgerOk());
  return h;
}
