/**
 * `mwa trigger <event_type>`: makes the event happen in the sandbox through the API and the
 * sandbox helpers, as a merchant's integration and its member would (extensions sections 8 and
 * 10), creating what it needs: a new member each time, funds, KYC, a payee, a card. It returns
 * once the event has been written (the object reached the state the event reports).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { MerchantWalletNotFoundError, type MerchantWalletClient } from '@merchant-wallet/sdk';
import type { CommandSpec } from '../command.js';
import { DurationError, parseDuration } from '../duration.js';
import { CommandError, UsageError } from '../io.js';
import { payNowQr } from '../paynow.js';

interface Member {
  id: string;
  external: string;
}

export interface TriggerResult {
  event_type: string;
  /** The object the event is about (`data.object`, `data.id`). */
  object: string;
  id: string;
  member: { id: string; external_member_id: string };
  /** Other objects created on the way. */
  created: Record<string, string>;
  note?: string;
}

/** What a flow can use: the client, a deadline, and the steps shared by several flows. */
class Run {
  readonly created: Record<string, string> = {};

  constructor(
    readonly client: MerchantWalletClient,
    private readonly deadline: number,
    private readonly say: (text: string) => void,
  ) {}

  step(text: string): void {
    this.say(`  ${text}`);
  }

  async member(): Promise<Member> {
    const external = `mwa-trigger-${randomBytes(4).toString('hex')}`;
    const m = await this.client.members.create({ external_member_id: external });
    this.step(`member ${m.id} (${external})`);
    this.created['member'] = m.id;
    return { id: m.id, external };
  }

  async deposit(m: Member, asset: string, amount: string, network?: string) {
    const d = await this.client.deposits.create({
      member_id: m.id,
      asset,
      amount,
      tx_hash: `mwa-trigger-${randomUUID()}`,
      ...(network ? { network } : {}),
    });
    this.step(`deposit ${d.id}: ${amount} ${asset} credited`);
    this.created[`deposit_${asset.toLowerCase()}`] = d.id;
    return d;
  }

  /** The member's first KYC profile: the hosted screen submitted, then approved at level 1 by the sandbox reviewer. */
  async kyc(m: Member) {
    const ticket = await this.client.kyc.createSession({ onBehalfOf: m.id });
    await this.client.hostedScreens.sandboxComplete(ticket.id, 'submitted');
    const profile = await this.client.kyc.sandboxReview(m.id, { decision: 'approved', level: 1 });
    this.step(`KYC profile ${profile.id} approved (level 1)`);
    this.created['kyc_profile'] = profile.id;
    return profile;
  }

  /** Polls until `done` says the object reached its state (true) or another end (false: an error). */
  async until<T>(what: string, read: () => Promise<T>, state: (x: T) => 'done' | 'wait' | 'failed'): Promise<T> {
    let delay = 100;
    for (;;) {
      const x = await read();
      const s = state(x);
      if (s === 'done') return x;
      if (s === 'failed') throw new CommandError(`${what} ended otherwise: ${JSON.stringify(x)}`);
      if (Date.now() + delay > this.deadline)
        throw new CommandError(
          `${what}: not reached before the timeout (last seen ${JSON.stringify(x)}); is the service running ` +
            `its background workers?`,
        );
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(1000, delay * 2);
    }
  }
}

const statusIs = (target: string, failed: string[]) => (x: { status: string }) =>
  x.status === target ? 'done' : failed.includes(x.status) ? 'failed' : 'wait';

/** A TRON address the service accepts (Base58Check). */
const TRON_ADDRESS = 'TJCnKsPa7y5okkXvQAidZBzqx3QyQ6sxMW';

type Flow = (run: Run) => Promise<Omit<TriggerResult, 'event_type' | 'created'>>;

const memberOf = (m: Member) => ({ id: m.id, external_member_id: m.external });

async function withdrawal(run: Run, end: 'confirm' | 'fail') {
  const m = await run.member();
  await run.deposit(m, 'USDT', '100', 'TRON');
  const w = await run.client.withdrawals.create(
    { asset: 'USDT', network: 'TRON', address: TRON_ADDRESS, amount: '10' },
    { onBehalfOf: m.id },
  );
  run.step(`withdrawal ${w.id}: 10 USDT locked`);
  if (end === 'confirm') await run.client.withdrawals.confirm(w.id);
  else await run.client.withdrawals.fail(w.id);
  return { object: 'withdrawal', id: w.id, member: memberOf(m) };
}

async function qrPayment(run: Run, outcome: 'completed' | 'failed') {
  const m = await run.member();
  await run.deposit(m, 'SGD', '50');
  const pay = () => run.client.qrpay.pay({ qr_code: payNowQr('12.50'), asset: 'SGD' }, { onBehalfOf: m.id });
  let p;
  if (outcome === 'failed') {
    // The QR provider refuses (this merchant's sandbox only, cleared right after): the order fails and the freeze is
    // returned.
    await run.client.sandbox.presetUpstreamBehavior({ upstream: 'qrpay', behavior: 'reject' });
    try {
      p = await pay();
    } finally {
      await run.client.sandbox.presetUpstreamBehavior({ upstream: 'qrpay', behavior: 'success' });
    }
  } else {
    p = await pay();
  }
  run.step(`QR payment ${p.id}: 12.50 SGD (${p.status})`);
  const other = outcome === 'completed' ? ['failed', 'refunded'] : ['completed', 'refunded'];
  await run.until(`QR payment ${p.id} ${outcome}`, () => run.client.qrpay.get(p.id), statusIs(outcome, other));
  return { object: 'qrpay_order', id: p.id, member: memberOf(m) };
}

export const flows: Record<string, Flow> = {
  'deposit.credited': async (run) => {
    const m = await run.member();
    const d = await run.deposit(m, 'USDT', '100', 'TRON');
    return { object: 'deposit', id: d.id, member: memberOf(m) };
  },
  'withdrawal.settled': (run) => withdrawal(run, 'confirm'),
  'withdrawal.failed': (run) => withdrawal(run, 'fail'),
  'qrpay.order.completed': (run) => qrPayment(run, 'completed'),
  'qrpay.order.failed': (run) => qrPayment(run, 'failed'),
  'remittance.order.completed': async (run) => {
    const m = await run.member();
    await run.kyc(m);
    await run.deposit(m, 'USDT', '100', 'TRON');
    const payee = await run.client.remittance.createPayee(
      {
        country: 'DE',
        currency: 'EUR',
        method: 'LOCAL',
        clearing: 'SEPA',
        entity: 'INDIVIDUAL',
        nickname: 'mwa trigger',
        fields: {
          first_name: 'Max',
          last_name: 'Mustermann',
          'bank_details.iban': 'DE89370400440532013000',
          'address.country': 'DE',
          'address.city': 'Köln',
          'address.street_address': 'Heidestr. 17',
          'address.postal_code': '51147',
        },
      },
      { onBehalfOf: m.id },
    );
    run.step(`payee ${payee.id} (SEPA, DE)`);
    run.created['payee'] = payee.id;
    const r = await run.client.remittance.create(
      { payee_id: payee.id, source_asset: 'USDT', source_amount: '20' },
      { onBehalfOf: m.id },
    );
    run.step(`remittance ${r.id}: 20 USDT to EUR (${r.status})`);
    await run.until(
      `remittance ${r.id} completed`,
      () => run.client.remittance.get(r.id),
      statusIs('completed', ['failed', 'returned']),
    );
    return { object: 'remittance_order', id: r.id, member: memberOf(m) };
  },
  'exchange.order.completed': async (run) => {
    const m = await run.member();
    await run.kyc(m);
    await run.deposit(m, 'USDT', '100', 'TRON');
    const o = await run.client.exchange.execute(
      { from_asset: 'USDT', to_asset: 'BTC', from_amount: '50' },
      { onBehalfOf: m.id },
    );
    run.step(`exchange order ${o.id}: 50 USDT to ${o.to_amount} BTC (${o.status})`);
    await run.until(
      `exchange order ${o.id} completed`,
      () => run.client.exchange.get(o.id),
      statusIs('completed', ['failed', 'expired']),
    );
    return { object: 'exchange_order', id: o.id, member: memberOf(m) };
  },
  'earn.order.settled': async (run) => {
    const m = await run.member();
    await run.deposit(m, 'USDT', '1000', 'TRON');
    const product = (await run.client.earn.products()).find((p) => p.type === 'flexible' && p.asset === 'USDT');
    if (!product) throw new CommandError('no flexible USDT earn product in this sandbox');
    const order = await run.client.earn.subscribe({ product_id: product.id, amount: '1000' }, { onBehalfOf: m.id });
    run.step(`earn order ${order.id}: 1000 USDT in ${product.id} (flexible)`);
    run.created['earn_order'] = order.id;
    // A flexible order's interest is paid every day of the merchant's clock.
    const clock = await run.client.sandbox.advanceClock(86_400);
    run.step(`sandbox clock advanced 1 day to ${clock.now}: the day's interest paid`);
    return {
      object: 'earn_order',
      id: m.id,
      member: memberOf(m),
      note:
        `a flexible order's daily payout names the member (data.id ${m.id}); the order is ${order.id}; the ` +
        `sandbox clock moved 1 day`,
    };
  },
  'card.topup.credited': async (run) => {
    const m = await run.member();
    await run.kyc(m);
    await run.deposit(m, 'USDT', '100', 'TRON');
    const product = (await run.client.cards.products()).find((p) => p.form_factor === 'virtual');
    if (!product) throw new CommandError('no virtual card product in this sandbox');
    const app = await run.client.cards.apply({ product_id: product.id, source_asset: 'USDT' }, { onBehalfOf: m.id });
    const approved = await run.client.cards.sandboxAdvanceApplication(app.id, 'approved');
    if (!approved.card_id) throw new CommandError(`card application ${app.id} approved without a card`);
    run.step(`card ${approved.card_id} issued (application ${app.id})`);
    run.created['card'] = approved.card_id;
    const cardId = approved.card_id;
    const topUp = await run.client.cards.topUp(cardId, { amount: '25', source_asset: 'USDT' }, { onBehalfOf: m.id });
    run.step(`top-up ${topUp.id}: 25 USDT (${topUp.status})`);
    await run.until(
      `top-up ${topUp.id} credited`,
      () => run.client.cards.getTopUp(cardId, topUp.id, { onBehalfOf: m.id }),
      statusIs('credited', ['failed']),
    );
    return { object: 'card_topup', id: topUp.id, member: memberOf(m) };
  },
  'kyc.profile.approved': async (run) => {
    const m = await run.member();
    const profile = await run.kyc(m);
    return { object: 'kyc_profile', id: profile.id, member: memberOf(m) };
  },
};

export const triggerableTypes = Object.keys(flows);

export const trigger: CommandSpec = {
  name: 'trigger',
  summary: 'Make an event happen in the sandbox',
  usage: 'trigger <event_type> [--timeout <duration>]',
  details: [
    'Drives the flow that writes the event through the API and the sandbox helpers, creating what it',
    'needs (a new member, funds, KYC, a payee, a card), and returns once the event has been written.',
    'Sandbox keys only. Event types:',
    ...triggerableTypes.map((t) => `  ${t}`),
    '',
    'earn.order.settled moves the sandbox clock one day; qrpay.order.failed makes the QR provider refuse',
    "this merchant's payments for the moment of the call. Flows that wait for an upstream (QR payment,",
    "remittance, card top-up) need the service's background workers (on by default).",
    '',
    'Example: mwa listen --forward-to http://localhost:3000/hooks & mwa trigger deposit.credited',
  ].join('\n'),
  options: {
    timeout: { type: 'string', placeholder: '<duration>', description: 'How long to wait for the event (default 60s)' },
  },
  positionals: { min: 1, max: 1, names: '<event_type>' },
  run: async (ctx) => {
    const type = ctx.positionals[0]!;
    const flow = flows[type];
    if (!flow) throw new UsageError(`cannot trigger "${type}"; one of: ${triggerableTypes.join(', ')}`, 'trigger');
    let timeoutS: number;
    try {
      timeoutS = parseDuration(ctx.str('timeout') ?? '60s');
    } catch (err) {
      if (err instanceof DurationError) throw new UsageError(`--timeout: ${err.message}`, 'trigger');
      throw err;
    }
    const client = ctx.client();
    await sandboxOnly(client);
    ctx.note(`Triggering ${type}`);
    const run = new Run(client, Date.now() + timeoutS * 1000, (text) => ctx.note(text));
    const r = await flow(run);
    const result: TriggerResult = { event_type: type, ...r, created: run.created };
    ctx.result(
      result,
      `${type}: ${r.object} ${r.id} (member ${r.member.external_member_id})${r.note ? `\n  ${r.note}` : ''}`,
    );
  },
};

/** A production key must not get members, deposits and payments made up: the sandbox clock answers only in the sandbox.
 * */
async function sandboxOnly(client: MerchantWalletClient): Promise<void> {
  try {
    await client.sandbox.clock();
  } catch (err) {
    if (err instanceof MerchantWalletNotFoundError)
      throw new CommandError('mwa trigger works in the sandbox only (this key and base URL are production)');
    throw err;
  }
}
