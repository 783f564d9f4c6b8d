import { Type } from 'typebox';
import type { AppInstance } from '../platform/http-app.js';
import type { ServiceContext } from '../service-context.js';
import { ApiError } from '../platform/errors.js';
import { newId } from '../platform/ids.js';
import { entryKinds, formatAmount, merchantBalances, parseAmount, postEntry, postEntryOrRefuse, prepaidCreditLines } from '../ledger/index.js';
import { getAsset } from '../modules/assets/queries.js';
import { getMerchant } from './merchants.js';

const Environment = Type.Union([Type.Literal('sandbox'), Type.Literal('production')]);

export async function operatorMoneyRoutes(app: AppInstance, ctx: ServiceContext): Promise<void> {
  const { db } = ctx;

  app.post('/admin/v1/merchants/:id/prepaid-credits', {
    schema: {
      params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) }),
      body: Type.Object({ environment: Environment, asset: Type.String({ minLength: 1, maxLength: 16 }), amount: Type.String({ minLength: 1, maxLength: 80 }) }),
    },
  }, async (req, reply) => {
    await getMerchant(db, req.params.id);
    const asset = await getAsset(db, req.body.asset.toUpperCase());
    if (!asset || !asset.enabled) throw new ApiError('asset_not_allowed');
    const amount = parseAmount(req.body.amount, asset.scale);
    if (amount <= 0n) throw new ApiError('invalid_request', 'amount must be greater than zero.');
    await db.transaction().execute(async (trx) => {
      const credit = await trx
        .insertInto('prepaid_credits')
        .values({ id: newId('ppc'), merchant_id: req.params.id, environment: req.body.environment, asset: asset.code, amount: amount.toString() })
        .returning('id')
        .executeTakeFirstOrThrow();
      await postEntry(trx, {
        environment: req.body.environment,
        merchantId: req.params.id,
        kind: entryKinds.prepaidCredit,
        referenceType: 'prepaid_credit',
        referenceId: credit.id,
        asset: asset.code,
        lines: prepaidCreditLines({ merchantId: req.params.id, amount }),
      });
    });
    const balance = (await merchantBalances(db, req.body.environment, req.params.id)).find((b) => b.asset === asset.code);
    return reply.code(201).send({ asset: asset.code, prepaid_available: balance?.prepaid_available ?? formatAmount(0n, asset.scale) });
  });

  // Reconciles the recorded custody with what the merchant really holds (for example funds the
  // merchant moved off the platform): custody against the platform's settlement clearing account.
  app.post('/admin/v1/merchants/:id/custody-adjustments', {
    schema: {
      params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) }),
      body: Type.Object({
        environment: Environment,
        asset: Type.String({ minLength: 1, maxLength: 16 }),
        amount: Type.String({ minLength: 1, maxLength: 80 }),
        direction: Type.Union([Type.Literal('increase'), Type.Literal('decrease')]),
        reason: Type.String({ minLength: 1, maxLength: 500 }),
      }),
    },
  }, async (req, reply) => {
    await getMerchant(db, req.params.id);
    const asset = await getAsset(db, req.body.asset.toUpperCase());
    if (!asset) throw new ApiError('asset_not_allowed');
    const amount = parseAmount(req.body.amount, asset.scale);
    if (amount <= 0n) throw new ApiError('invalid_request', 'amount must be greater than zero.');
    const custody = { owner: 'merchant' as const, merchantId: req.params.id, bucket: 'custody' as const };
    const clearing = { owner: 'platform' as const, bucket: 'settlement_clearing' as const };
    const increase = req.body.direction === 'increase';
    await db.transaction().execute((trx) =>
      postEntryOrRefuse(trx, {
        environment: req.body.environment,
        merchantId: req.params.id,
        kind: 'custody.adjustment',
        referenceType: 'custody_adjustment',
        referenceId: newId('cad'),
        asset: asset.code,
        lines: [
          { account: custody, side: increase ? 'debit' : 'credit', amount },
          { account: clearing, side: increase ? 'credit' : 'debit', amount },
        ],
      }));
    const balance = (await merchantBalances(db, req.body.environment, req.params.id)).find((b) => b.asset === asset.code);
    return reply.code(201).send({ asset: asset.code, custody: balance?.custody ?? formatAmount(0n, asset.scale) });
  });

  const Address = Type.Object({ network: Type.String({ pattern: '^[A-Z0-9_]{2,32}$' }), address: Type.String({ minLength: 1, maxLength: 200 }) });

  app.post('/admin/v1/address-blacklist', {
    schema: { body: Type.Object({ ...Address.properties, reason: Type.Optional(Type.String({ maxLength: 500 })) }) },
  }, async (req, reply) => {
    await db
      .insertInto('blacklisted_addresses')
      .values({ network: req.body.network, address: req.body.address, reason: req.body.reason ?? '' })
      .onConflict((oc) => oc.columns(['network', 'address']).doUpdateSet({ reason: req.body.reason ?? '' }))
      .execute();
    return reply.code(201).send({ network: req.body.network, address: req.body.address, blacklisted: true });
  });

  app.delete('/admin/v1/address-blacklist/:network/:address', {
    schema: { params: Address },
  }, async (req) => {
    await db.deleteFrom('blacklisted_addresses').where('network', '=', req.params.network).where('address', '=', req.params.address).execute();
    return { network: req.params.network, address: req.params.address, blacklisted: false };
  });
}
