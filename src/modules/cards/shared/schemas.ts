import { Type } from 'typebox';
import { idParams } from '../../../platform/routes/route-kinds.js';

/** Route schemas several card sub-areas use (an address, a screen ticket, the id parameter). The single source for
 * validation, types and OpenAPI. */

export const AddressSchema = Type.Object(
  {
    address: Type.String({ minLength: 1, maxLength: 200 }),
    city: Type.String({ minLength: 1, maxLength: 100 }),
    state: Type.Optional(Type.String({ maxLength: 100 })),
    country: Type.String({ description: 'ISO 3166-1 alpha-2, upper case' }),
    postal_code: Type.String({ minLength: 1, maxLength: 20 }),
  },
  { title: 'BillingAddress' },
);

export const Ticket = Type.Object(
  { id: Type.String(), hosted_url: Type.String(), expires_at: Type.Integer() },
  { title: 'CardScreenTicket' },
);

export const IdParams = idParams({ maxLength: 80 });
