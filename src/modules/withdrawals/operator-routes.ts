import { Type } from 'typebox';
import type { AppInstance } from '../../platform/http-app.js';
import type { ServiceContext } from '../../service-context.js';
import { blacklistAddress, unblacklistAddress } from './queries.js';

const Address = Type.Object({ network: Type.String({ pattern: '^[A-Z0-9_]{2,32}$' }), address: Type.String({ minLength: 1, maxLength: 200 }) });

/** Operator calls of withdrawals: the address blacklist. */
export async function withdrawalOperatorRoutes(app: AppInstance, ctx: ServiceContext): Promise<void> {
  const { db } = ctx;

  app.post('/admin/v1/address-blacklist', {
    schema: { body: Type.Object({ ...Address.properties, reason: Type.Optional(Type.String({ maxLength: 500 })) }) },
  }, async (req, reply) => {
    await blacklistAddress(db, req.body.network, req.body.address, req.body.reason ?? '');
    return reply.code(201).send({ network: req.body.network, address: req.body.address, blacklisted: true });
  });

  app.delete('/admin/v1/address-blacklist/:network/:address', {
    schema: { params: Address },
  }, async (req) => {
    await unblacklistAddress(db, req.params.network, req.params.address);
    return { network: req.params.network, address: req.params.address, blacklisted: false };
  });
}
