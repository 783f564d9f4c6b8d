import { Type } from 'typebox';
import { publicRoutes } from '../../platform/routes/route-module.js';
import { merchantWrite, readList } from '../../platform/routes/route-kinds.js';
import { PageQuery } from '../../platform/routes/pagination.js';
import { depositAddressErrors, listDepositAddresses, requestAddress, storeAddress } from './service.js';

const tags = ['Merchant'];

export const DepositAddress = Type.Object(
  {
    id: Type.String({ description: 'dad_<uuid>' }),
    asset: Type.String(),
    network: Type.String(),
    address: Type.String({ description: "The service's own address: never accepted as a withdrawal target" }),
    created_at: Type.String({ format: 'date-time' }),
  },
  { title: 'DepositAddress' },
);

export const merchantDepositAddressRoutes = publicRoutes((route, ctx) => {
  const { db } = ctx;

  route.post(
    '/v1/merchant/deposit-address',
    merchantWrite({
      scope: 'merchant:write',
      errors: depositAddressErrors.request,
      operationId: 'createMerchantDepositAddress',
      summary: 'Get a new deposit address from the chain provider',
      description: [
        'Issues an address for the asset and network. `asset_not_allowed`: the asset or network is unknown ' +
          'or not enabled. ',
        '`service_unavailable` (with `retry_after`, seconds): the chain provider cannot serve now (no ' +
          'channel for the network, refusal, timeout); ',
        'after no answer (timeout, 5xx, or an answer that issues no address) it is not stored against the ' +
          'key: retry after `retry_after` seconds with the same key (the same key always yields the same ' +
          'address); ' +
          ("after a refusal (no channel, refused) it is the key's result, as every 4xx: retry after " +
            '`retry_after` seconds with a new key. The message says which.'),
      ].join(''),
      tags,
      body: Type.Object({
        asset: Type.String({ minLength: 1, maxLength: 16 }),
        network: Type.String({ minLength: 1, maxLength: 32 }),
      }),
      response: { 201: DepositAddress },
    }),
    async ({ principal: { merchantId, environment }, idempotency, body, write }) => {
      const issued = await requestAddress(ctx, merchantId, environment, idempotency, body);
      return write((trx) => storeAddress(trx, merchantId, environment, issued));
    },
  );

  route.get(
    '/v1/merchant/deposit-addresses',
    readList({
      scope: 'merchant:read',
      principal: 'merchant',
      operationId: 'listMerchantDepositAddresses',
      summary: "List the merchant's deposit addresses",
      description: 'Newest first; optional `asset` and `network` filters.',
      tags,
      query: Type.Object({
        ...PageQuery.properties,
        asset: Type.Optional(Type.String({ maxLength: 16 })),
        network: Type.Optional(Type.String({ maxLength: 32 })),
      }),
      item: DepositAddress,
    }),
    async ({ principal, query }) => listDepositAddresses(db, principal.merchantId, principal.environment, query),
  );
});
