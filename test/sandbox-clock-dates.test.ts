/** Dates a merchant sees follow its sandbox clock after an advance (extensions 8, docs/clock.md). */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { MerchantWalletClient } from '@merchant-wallet/sdk';
import type { RunningService } from '../src/server.js';
import { newMerchantClient, useTestService } from './support/service.js';
import { sepaPayee } from './support/fixtures.js';

const days = 86_400;
const near = (at: string, clock: string, what: string) =>
  assert.ok(Math.abs(Date.parse(at) - Date.parse(clock)) < 30_000, `${what}: ${at} is the merchant's time ${clock}`);

describe('sandbox clock: dates a merchant sees', () => {
  let service: RunningService;
  useTestService({ merchant: false }, (s) => ({ service } = s));
  after(async () => {
    await service.close();
  });

  const ahead = async () => {
    const m = await newMerchantClient(service);
    await m.client.sandbox.advanceClock(40 * days);
    return m;
  };
  const now = async (client: MerchantWalletClient) => (await client.sandbox.clock()).now;

  it("dates a merchant deposit address on the merchant's clock", async () => {
    const { client } = await ahead();
    const issued = await client.merchant.requestDepositAddress({ asset: 'USDT', network: 'TRON' });
    near(issued.created_at, await now(client), 'created_at of the new address');
    const listed = [];
    for await (const a of client.merchant.depositAddresses({})) listed.push(a);
    near(listed[0]!.created_at, await now(client), 'created_at in the list');
  });

  it("dates a remittance payee on the merchant's clock: created_at and updated_at alike", async () => {
    const { client } = await ahead();
    const external = `pd-${randomUUID().slice(0, 8)}`;
    await client.members.create({ external_member_id: external });
    const payee = await client.remittance.createPayee(sepaPayee(), { onBehalfOf: external });
    const got = await client.request<any>({
      method: 'GET',
      path: `/v1/remit/payees/${payee.id}`,
      onBehalfOf: external,
    });
    const clock = await now(client);
    near(got.created_at, clock, 'payee created_at');
    near(got.updated_at, clock, 'payee updated_at');
    assert.ok(Date.parse(got.created_at) <= Date.parse(got.updated_at), 'created no later than updated');
  });
});
