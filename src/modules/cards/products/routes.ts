import type { ServiceContext } from '../../../service-context.js';
import type { Router } from '../../../platform/routes/route.js';
import { readList } from '../../../platform/routes/route-kinds.js';
import { CardProduct } from './schemas.js';
import { listProducts } from './service.js';

const tags = ['Cards'];

/**
 * Card product routes (docs/cards.md): the catalogue a merchant may issue from. One function per route: the
 * area's index.ts registers them in the order of the OpenAPI document.
 */
export function productRoutes(route: Router, ctx: ServiceContext) {
  const { db } = ctx;
  return {
    list() {
      route.get(
        '/v1/cards/products',
        readList({
          scope: 'cards:read',
          principal: 'merchant',
          operationId: 'listCardProducts',
          summary: 'List card products',
          description:
            'Enabled products the merchant may issue: all BINs when the merchant has no BIN authorisation ' +
            'rows, otherwise only the authorised BINs. Never paged.',
          tags,
          item: CardProduct,
        }),
        async ({ principal }) => listProducts(db, principal.merchantId, principal.environment),
      );
    },
  };
}
