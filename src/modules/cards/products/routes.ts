import { cardList, type CardRoute } from '../shared/routes.js';
import { CardProduct } from './schemas.js';
import { listProducts } from './service.js';

/**
 * Card product routes (docs/cards.md): the catalogue a merchant may issue from; the area's index.ts registers them
 * in the order of the OpenAPI document.
 */
export const productRoutes = {
  list: (route, { db }) =>
    route.get(
      '/v1/cards/products',
      cardList({
        principal: 'merchant',
        operationId: 'listCardProducts',
        summary: 'List card products',
        description:
          'Enabled products the merchant may issue: all BINs when the merchant has no BIN authorisation ' +
          'rows, otherwise only the authorised BINs. Never paged.',
        item: CardProduct,
      }),
      async ({ principal }) => listProducts(db, principal.merchantId, principal.environment),
    ),
} satisfies Record<string, CardRoute>;
