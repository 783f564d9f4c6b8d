import { Type } from 'typebox';
import type { AppInstance } from '../../platform/http-app.js';
import type { ServiceContext } from '../../service-context.js';
import { executeWrite } from '../../platform/idempotency.js';
import { PageQuery, listEnvelope } from '../../platform/pagination.js';
import { listDepositAddresses, requestAddress, storeAddress } from './service.js';

const tags = ['Merchant'];

const DepositAddress = Type.Object({
  id: Type.String({ description: 'dad_<uuid>' }),
  asset: Type.String(),
  network: Type.String(),
  address: Type.String({ description: 'The service\'s own address: never accepted as a withdrawal target' }),
  created_at: Type.String({ format: 'date-time' }),
});

export async function merchantDepositAddressRoutes(app: AppInstance, ctx: ServiceContext): Promise<void> {
  const { db } = ctx;

  app.post('/v1/merchant/deposit-address', {
    config: { access: { scope: 'merchant:write', principal: 'merchant', idempotency: 'required', errors: ['asset_not_allowed', 'service_unavailable'] } },
    schema: {
      summary: 'Get a new deposit address from the chain provider',
      description: [
        'Issues an address for the asset and network. `asset_not_allowed`: the asset or network is unknown or not enabled. ',
        '`service_unavailable` (with `retry_after`, seconds): the chain provider cannot serve now (no channel for the network, refusal, timeout); ',
        'that answer is not stored against the key: retry after `retry_after` seconds, with the same key (the same key always yields the same address).',
      ].join(''),
      tags,
      body: Type.Object({
        asset: Type.String({ minLength: 1, maxLength: 16 }),
        network: Type.String({ minLength: 1, maxLength: 32 }),
      }),
      response: { 201: DepositAddress },
    },
  }, async (req, reply) => {
    const { merchantId, environment } = req.auth!;
    const issued = await requestAddress(ctx, merchantId, environment, req.idempotency!, req.body);
    return executeWrite(db, req, reply, async (trx) => ({ status: 201, body: await storeAddress(trx, merchantId, environment, issued) }));
  });

  app.get('/v1/merchant/deposit-addresses', {
    config: { access: { scope: 'merchant:read', principal: 'merchant' } },
    schema: {
      summary: 'List the merchant\'s deposit addresses',
      description: 'Newest first; optional `asset` and `network` filters.',
      tags,
      querystring: Type.Object({
        ...PageQuery.properties,
        asset: Type.Optional(Type.String({ maxLength: 16 })),
        network: Type.Optional(Type.String({ maxLength: 32 })),
      }),
      response: { 200: listEnvelope(DepositAddress) },
    },
  }, async (req) => listDepositAddresses(db, req.auth!.merchantId, req.auth!.environment, req.query));
}
