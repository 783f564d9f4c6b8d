import { Type } from 'typebox';
import type { AppInstance } from '../../platform/http-app.js';
import type { ServiceContext } from '../../service-context.js';
import { PageQuery, listEnvelope } from '../../platform/pagination.js';
import { router } from '../../platform/route.js';
import { conversionDateErrors, conversionDates } from './conversion-dates.js';
import { findCorridors } from './corridors.js';
import { formSchema } from './form-schema.js';
import { createPayee, getPayee, listPayees, payeeErrors, unlinkPayee, updatePayee, verifyPayee } from './payees.js';
import { ConversionDatesQuery, ConversionDatesResponse, FormSchemaResponse, FormSchemaQuery, Payee, PayeeBody, PayeeCreated, PayeeIdParams, PayeeUpdated, NameCheck } from './route-schemas.js';

const tags = ['Remittance'];

/** Payees and the payee form schema (orders and conversion dates: order-routes.ts). */
export async function remittanceRoutes(app: AppInstance, ctx: ServiceContext): Promise<void> {
  const { db } = ctx;
  const route = router(app, ctx);

  route.get('/v1/remit/payee-form-schema', {
    access: { scope: 'remittances:read', principal: 'either' },
    errors: ['corridor_not_supported'],
    schema: {
      operationId: 'getPayeeFormSchema',
      summary: 'The payee form for a corridor, step by step',
      description: [
        'Walk from country to the full form: with no query, the answer offers the countries; each chosen selector (`country_code`, `currency`, `payment_method`, `clearing_system`, `entity_type`; aliases `country`, `method`, `clearing`, `entity`) narrows the next one\'s `enum`. ',
        '`step` names the first selector still to choose, or `fields` once the corridor\'s field contract follows the selectors. ',
        'Every field with `refresh_on_change: true` changes what is asked or how it is checked: ask again with its new value (like Wise\'s `refreshRequirementsOnChange`). ',
        'Values are checked after normalisation: `alnum_upper`, `iban`, `bic` lose hyphens and spaces and are upper-cased; `iban` also gets the per-country length and the mod-97 check; `routing_code` is checked by the type its `bank_details.routing_code_type1` names (`sort_code`: six digits; `aba`: nine digits with the ABA checksum). ',
        'A malformed selector is `invalid_request`; one that no enabled corridor serves is `corridor_not_supported`.',
      ].join(''),
      tags,
      querystring: FormSchemaQuery,
      response: { 200: FormSchemaResponse },
    },
  }, async ({ principal, query }) => {
    const enabled = await findCorridors(db, principal.environment, {}, { enabledOnly: true });
    return formSchema(enabled, {
      country_code: query.country_code ?? query.country,
      currency: query.currency,
      payment_method: query.payment_method ?? query.method,
      clearing_system: query.clearing_system ?? query.clearing,
      entity_type: query.entity_type ?? query.entity,
    });
  });

  route.post('/v1/remit/payees', {
    access: { scope: 'remittances:write', principal: 'member', idempotency: 'required' },
    errors: payeeErrors.create,
    schema: {
      operationId: 'createPayee',
      summary: 'Create or link a payee',
      description: [
        'Creates the member\'s link to a platform-level shared payee, keyed by the fingerprint of the four corridor segments plus the account identifier. ',
        '`outcome`: `created` (new account), `linked` (the account exists and the holder name is the same), `review` (it exists under another holder name: the link is made and the mismatch recorded); all three answer 201. ',
        'Keys of `fields` outside the contract (`GET /v1/remit/payee-form-schema`) are dropped; each value is truncated at 256 characters and normalised before it is checked (the text as sent is kept). ',
        '`invalid_fields` carries `fields: [{key, reason}]` with reason `required`, `too_long`, `pattern`, `not_in_enum`, `iban_length`, `iban_checksum`, `account_identifier_required` or `unknown_clearing_system`. ',
        '`corridor_not_supported`: the four segments incomplete, the corridor or entity type not enabled, a restricted jurisdiction (corridor, address or bank country), or no routing-code type the corridor can confirm. ',
        'No upstream call is made: registration happens at an order\'s dispatch. Check the holder name with `POST /v1/remit/payees/{id}/verify` before ordering.',
      ].join(''),
      tags,
      body: PayeeBody,
      response: { 201: PayeeCreated },
    },
  }, async ({ principal, body, write }) => write(async (trx) => createPayee(trx, principal, body, await ctx.clock.now(trx, principal))));

  route.get('/v1/remit/payees', {
    access: { scope: 'remittances:read', principal: 'member' },
    schema: {
      operationId: 'listPayees',
      summary: 'List the member\'s payees',
      description: 'Favourites first, then newest; keyset cursor. Unlinked payees are not listed.',
      tags,
      querystring: PageQuery,
      response: { 200: listEnvelope(Payee) },
    },
  }, async ({ principal, query }) => listPayees(db, principal, query));

  route.get('/v1/remit/payees/:id', {
    access: { scope: 'remittances:read', principal: 'member' },
    errors: payeeErrors.get,
    schema: { operationId: 'getPayee', summary: 'Get a payee', description: 'The full record; the account number, IBAN or proxy is masked. Missing, another member\'s or unlinked: `not_found`.', tags, params: PayeeIdParams, response: { 200: Payee } },
  }, async ({ principal, params }) => getPayee(db, principal, params.id));

  route.patch('/v1/remit/payees/:id', {
    access: { scope: 'remittances:write', principal: 'member', idempotency: 'optional' },
    errors: payeeErrors.update,
    schema: {
      operationId: 'updatePayee',
      summary: 'Change a payee\'s nickname or favourite flag',
      description: 'Only the member\'s private nickname (at most 64 characters, longer is truncated; an empty string clears it) and favourite flag change; bank details never do (a changed account is a new payee). Neither sent: `invalid_fields`. Missing, another member\'s or unlinked: `not_found`.',
      tags,
      params: PayeeIdParams,
      // Optional: no body at all is "neither sent" (`invalid_fields`), like `{}`. A nickname of any
      // length is truncated to 64, as on creation (the body limit bounds it).
      body: Type.Optional(Type.Object({
        nickname: Type.Optional(Type.String()),
        favorite: Type.Optional(Type.Boolean()),
      }, { examples: [{ nickname: 'Mum', favorite: true }] })),
      response: { 200: PayeeUpdated },
    },
  }, async ({ principal, params, body, write }) => write(async (trx) => updatePayee(trx, principal, params.id, body, await ctx.clock.now(trx, principal))));

  route.delete('/v1/remit/payees/:id', {
    access: { scope: 'remittances:write', principal: 'member' },
    errors: payeeErrors.unlink,
    schema: {
      operationId: 'deletePayee',
      summary: 'Unlink a payee',
      description: 'Removes the member\'s link (the shared payee stays for others). Naturally idempotent: a repeat answers the same. Afterwards the payee is `not_found` to every other call.',
      tags,
      params: PayeeIdParams,
      response: { 200: Type.Object({ id: Type.String(), status: Type.Literal('unlinked') }) },
    },
  }, async ({ principal, params, write }) => write(async (trx) => unlinkPayee(trx, principal, params.id, await ctx.clock.now(trx, principal))));

  route.post('/v1/remit/payees/:id/verify', {
    access: { scope: 'remittances:write', principal: 'member', idempotency: 'optional' },
    errors: payeeErrors.verify,
    schema: {
      operationId: 'verifyPayee',
      summary: 'Check the payee\'s holder name with the bank',
      description: 'A name check through the remittance provider; moves no money and is not affected by sandbox injection. `result`: `match`, `close_match` (with `suggested_name`, the name the bank holds), `no_match`, or `unavailable` (the bank or provider cannot answer now; try again later). The last result is kept on the payee (`name_check`).',
      tags,
      params: PayeeIdParams,
      response: { 200: NameCheck },
    },
  }, async ({ principal, params, once }) => once(() => verifyPayee(ctx, principal, params.id)));

  route.get('/v1/remit/conversion-dates', {
    access: { scope: 'remittances:read', principal: 'merchant' },
    errors: conversionDateErrors,
    schema: {
      operationId: 'getConversionDates',
      summary: 'Settlement days of the coming week for a payout currency',
      description: [
        'The provider\'s settlement days, forwarded without local calculation (weekends and the settlement systems\' holidays are not valid; today is valid only before the line\'s cut-off). ',
        'An order\'s actual date is its `payout_date`. When `same_currency` is true `dates` may be empty: that does not mean the corridor is closed. ',
        '`line`: `express` (default) or `pobo`; any other value is treated as `express`. ',
        'Errors: `invalid_request` (currency missing or not three upper-case letters), `product_not_available` (the line does not serve the currency), `service_unavailable` (no settlement currency configured for the line), 502 `upstream_error` (the provider cannot be asked: never an empty list; retry).',
      ].join(''),
      tags,
      querystring: ConversionDatesQuery,
      response: { 200: ConversionDatesResponse },
    },
  }, async ({ principal, query }) => conversionDates(ctx, principal, query));
}
