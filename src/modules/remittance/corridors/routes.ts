import { publicRoutes } from '../../../platform/routes/route-module.js';
import { findCorridors } from './queries.js';
import { FormSchemaQuery, FormSchemaResponse } from './schemas.js';
import { formSchema } from './views.js';

const tags = ['Remittance'];

/** The payee form over the enabled corridors (the catalogue's writes: operator-routes.ts). */
export const corridorRoutes = publicRoutes((route, { db }) => {
  route.get(
    '/v1/remit/payee-form-schema',
    {
      access: { scope: 'remittances:read', principal: 'either' },
      errors: ['corridor_not_supported'],
      schema: {
        operationId: 'getPayeeFormSchema',
        summary: 'The payee form for a corridor, step by step',
        description: [
          'Walk from country to the full form: with no query, the answer offers the countries; each chosen ' +
            'selector (`country_code`, `currency`, `payment_method`, `clearing_system`, `entity_type`; aliases ' +
            "`country`, `method`, `clearing`, `entity`) narrows the next one's `enum`. ",
          "`step` names the first selector still to choose, or `fields` once the corridor's field contract " +
            'follows the selectors. ',
          'Every field with `refresh_on_change: true` changes what is asked or how it is checked: ask again ' +
            "with its new value (like Wise's `refreshRequirementsOnChange`). ",
          'Values are checked after normalisation: `alnum_upper`, `iban`, `bic` lose hyphens and spaces and ' +
            'are upper-cased; `iban` also gets the per-country length and the mod-97 check; `routing_code` is ' +
            'checked by the type its `bank_details.routing_code_type1` names (`sort_code`: six digits; `aba`: ' +
            'nine digits with the ABA checksum). ',
          'A malformed selector is `invalid_request`; one that no enabled corridor serves is `corridor_not_supported`.',
        ].join(''),
        tags,
        querystring: FormSchemaQuery,
        response: { 200: FormSchemaResponse },
      },
    },
    async ({ principal, query }) => {
      const enabled = await findCorridors(db, principal.environment, {}, { enabledOnly: true });
      return formSchema(enabled, {
        country_code: query.country_code ?? query.country,
        currency: query.currency,
        payment_method: query.payment_method ?? query.method,
        clearing_system: query.clearing_system ?? query.clearing,
        entity_type: query.entity_type ?? query.entity,
      });
    },
  );
});
