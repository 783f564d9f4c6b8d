import { Type } from 'typebox';
import { operatorRoutes } from '../../platform/routes/route-module.js';
import { operatorCreate } from '../../platform/routes/route-kinds.js';
import { blacklistAddress, unblacklistAddress } from './queries.js';

const Address = Type.Object({
  network: Type.String({ pattern: '^[A-Z0-9_]{2,32}$' }),
  address: Type.String({ minLength: 1, maxLength: 200 }),
});
const Listed = Type.Object({ ...Address.properties, blacklisted: Type.Boolean() }, { title: 'BlacklistedAddress' });

/** Operator calls of withdrawals: the address blacklist. */
export const withdrawalOperatorRoutes = operatorRoutes((route) => {
  route.post(
    '/admin/v1/address-blacklist',
    operatorCreate({
      operationId: 'addBlacklistedAddress',
      body: Type.Object({ ...Address.properties, reason: Type.Optional(Type.String({ maxLength: 500 })) }),
      response: Listed,
    }),
    async ({ body, write }) => {
      await write((trx) => blacklistAddress(trx, body.network, body.address, body.reason ?? ''));
      return { network: body.network, address: body.address, blacklisted: true };
    },
  );

  route.delete(
    '/admin/v1/address-blacklist/:network/:address',
    {
      schema: { operationId: 'removeBlacklistedAddress', params: Address, response: { 200: Listed } },
    },
    async ({ params, write }) => {
      await write((trx) => unblacklistAddress(trx, params.network, params.address));
      return { network: params.network, address: params.address, blacklisted: false };
    },
  );
});
