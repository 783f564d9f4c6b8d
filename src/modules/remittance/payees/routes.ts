import { Type } from 'typebox';
import { PageQuery } from '../../../platform/routes/pagination.js';
import { memberWrite, readList, readOne } from '../../../platform/routes/route-kinds.js';
import { publicRoutes } from '../../../platform/routes/route-module.js';
import { Payee, PayeeBody, PayeeCreated, PayeeIdParams, PayeeUpdated, NameCheck } from './schemas.js';
import { createPayee, getPayee, listPayees, payeeErrors, unlinkPayee, updatePayee, verifyPayee } from './service.js';

const tags = ['Remittance'];

/** Payees (the payee form: corridors/routes.ts). */
export const payeeRoutes = publicRoutes((route, ctx) => {
  const { db } = ctx;

  route.post(
    '/v1/remit/payees',
    memberWrite({
      scope: 'remittances:write',
      errors: payeeErrors.create,
      operationId: 'createPayee',
      summary: 'Create or link a payee',
      description: [
        "Creates the member's link to a platform-level shared payee, keyed by the fingerprint of the four " +
          'corridor segments plus the account identifier. ',
        '`outcome`: `created` (new account), `linked` (the account exists and the holder name is the ' +
          'same), `review` (it exists under another holder name: the link is made and the mismatch ' +
          'recorded); all three answer 201. ',
        'Keys of `fields` outside the contract (`GET /v1/remit/payee-form-schema`) are dropped; each value ' +
          'is truncated at 256 characters and normalised before it is checked (the text as sent is kept). ',
        '`invalid_fields` carries `fields: [{key, reason}]` with reason `required`, `too_long`, `pattern`, ' +
          '`not_in_enum`, `iban_length`, `iban_checksum`, `account_identifier_required` or ' +
          '`unknown_clearing_system`. ',
        '`corridor_not_supported`: the four segments incomplete, the corridor or entity type not enabled, ' +
          'a restricted jurisdiction (corridor, address or bank country), or no routing-code type the ' +
          'corridor can confirm. ',
        "No upstream call is made: registration happens at an order's dispatch. Check the holder name with " +
          '`POST /v1/remit/payees/{id}/verify` before ordering.',
      ].join(''),
      tags,
      body: PayeeBody,
      response: { 201: PayeeCreated },
    }),
    async ({ principal, body, writeNow }) => writeNow((trx, now) => createPayee(trx, principal, body, now)),
  );

  route.get(
    '/v1/remit/payees',
    readList({
      scope: 'remittances:read',
      principal: 'member',
      operationId: 'listPayees',
      summary: "List the member's payees",
      description: 'Favourites first, then newest; keyset cursor. Unlinked payees are not listed.',
      tags,
      query: PageQuery,
      item: Payee,
    }),
    async ({ principal, query }) => listPayees(db, principal, query),
  );

  route.get(
    '/v1/remit/payees/:id',
    readOne({
      scope: 'remittances:read',
      principal: 'member',
      errors: payeeErrors.get,
      operationId: 'getPayee',
      summary: 'Get a payee',
      description:
        "The full record; the account number, IBAN or proxy is masked. Missing, another member's or " +
        'unlinked: `not_found`.',
      tags,
      params: PayeeIdParams,
      response: Payee,
    }),
    async ({ principal, params }) => getPayee(db, principal, params.id),
  );

  route.patch(
    '/v1/remit/payees/:id',
    memberWrite({
      scope: 'remittances:write',
      idempotency: 'optional',
      errors: payeeErrors.update,
      operationId: 'updatePayee',
      summary: "Change a payee's nickname or favourite flag",
      description:
        "Only the member's private nickname (at most 64 characters, longer is truncated; an empty string " +
        'clears it) and favourite flag change; bank details never do (a changed account is a new payee). ' +
        "Neither sent: `invalid_fields`. Missing, another member's or unlinked: `not_found`.",
      tags,
      params: PayeeIdParams,
      // Optional: no body at all is "neither sent" (`invalid_fields`), like `{}`. A nickname of any
      // length is truncated to 64, as on creation (the body limit bounds it).
      body: Type.Optional(
        Type.Object(
          {
            nickname: Type.Optional(Type.String()),
            favorite: Type.Optional(Type.Boolean()),
          },
          { examples: [{ nickname: 'Mum', favorite: true }] },
        ),
      ),
      response: { 200: PayeeUpdated },
    }),
    async ({ principal, params, body, writeNow }) =>
      writeNow((trx, now) => updatePayee(trx, principal, params.id, body, now)),
  );

  route.delete(
    '/v1/remit/payees/:id',
    memberWrite({
      scope: 'remittances:write',
      idempotency: 'none',
      errors: payeeErrors.unlink,
      operationId: 'deletePayee',
      summary: 'Unlink a payee',
      description:
        "Removes the member's link (the shared payee stays for others). Naturally idempotent: a repeat " +
        'answers the same. Afterwards the payee is `not_found` to every other call.',
      tags,
      params: PayeeIdParams,
      response: { 200: Type.Object({ id: Type.String(), status: Type.Literal('unlinked') }) },
    }),
    async ({ principal, params, writeNow }) => writeNow((trx, now) => unlinkPayee(trx, principal, params.id, now)),
  );

  route.post(
    '/v1/remit/payees/:id/verify',
    memberWrite({
      scope: 'remittances:write',
      idempotency: 'optional',
      errors: payeeErrors.verify,
      operationId: 'verifyPayee',
      summary: "Check the payee's holder name with the bank",
      description:
        'A name check through the remittance provider; moves no money and is not affected by sandbox ' +
        'injection. `result`: `match`, `close_match` (with `suggested_name`, the name the bank holds), ' +
        '`no_match`, or `unavailable` (the bank or provider cannot answer now; try again later). The last ' +
        'result is kept on the payee (`name_check`).',
      tags,
      params: PayeeIdParams,
      response: { 200: NameCheck },
    }),
    async ({ principal, params, once }) => once(() => verifyPayee(ctx, principal, params.id)),
  );
});
