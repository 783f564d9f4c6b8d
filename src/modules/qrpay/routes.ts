import { Type } from 'typebox';
import { constantList } from '../../platform/routes/pagination.js';
import {
  idParams,
  memberListsOwn,
  memberSeesOwnOnly,
  memberWrite,
  readList,
  readOne,
  statusPageQuery,
} from '../../platform/routes/route-kinds.js';
import { publicRoutes } from '../../platform/routes/route-module.js';
import type { ErrorCode } from '../../platform/errors.js';
import { decodeQr, getPayment, listPayments, schemesWithPayable } from './reads.js';
import { claimLeaseMs, finishPayment, noteLengthMax, openPayment, paymentPlan } from './create.js';

const tags = ['QR pay'];

/** The codes the service's decode and payment can answer (beyond invalid input). */
const qrpayErrors = {
  decode: ['qr_code_invalid', 'upstream_error', 'upstream_timeout'],
  pay: ['qr_code_invalid', 'asset_not_allowed', 'insufficient_balance', 'upstream_error', 'upstream_timeout'],
  get: ['not_found'],
} as const satisfies Record<string, readonly ErrorCode[]>;

export const QrScheme = Type.Object(
  {
    id: Type.String({ description: 'Our scheme id, e.g. `sg_paynow`' }),
    name: Type.String(),
    country: Type.String({ description: 'ISO 3166-1 alpha-2' }),
    currency: Type.String({ description: 'ISO 4217 alphabetic' }),
    payable: Type.Boolean({
      description: 'Whether the service can pay this scheme now: its currency is an enabled asset',
    }),
  },
  { title: 'QrScheme' },
);

export const DecodedQr = Type.Object(
  {
    scheme: Type.String({
      description: "Scheme id (see `GET /v1/qrpay/schemes`), from the merchant account template's GUID",
    }),
    scheme_name: Type.String(),
    payable: Type.Boolean({ description: 'Whether `POST /v1/qrpay/payments` can pay this code' }),
    merchant_name: Type.String({ description: 'Field 59' }),
    merchant_city: Type.String({ description: 'Field 60' }),
    country: Type.String({ description: 'Field 58' }),
    currency: Type.String({ description: 'Field 53 as ISO 4217 alphabetic' }),
    amount: Type.Union([Type.String(), Type.Null()], {
      description: "Field 54 at the currency's scale; null when the code carries no amount (the payer enters it)",
    }),
    merchant_category_code: Type.String({ description: 'Field 52' }),
    point_of_initiation: Type.Union([Type.Literal('static'), Type.Literal('dynamic'), Type.Null()], {
      description: 'Field 01: 11 static, 12 dynamic',
    }),
    reference: Type.Union([Type.String(), Type.Null()], {
      description: 'Field 62: reference label (05) or bill number (01)',
    }),
  },
  { title: 'DecodedQrCode' },
);

export const QrPayment = Type.Object(
  {
    id: Type.String({ description: 'qrp_<uuid>' }),
    status: Type.Union(
      [Type.Literal('processing'), Type.Literal('completed'), Type.Literal('failed'), Type.Literal('refunded')],
      {
        description:
          '`processing` until the payment network confirms; `completed` is terminal success; `failed`: the ' +
          'debit was returned in full to available; `refunded`: it had completed and was refunded to ' +
          'available',
      },
    ),
    status_version: Type.Integer({ description: 'Increases with each status; merge webhook events forward by it' }),
    member_id: Type.String(),
    scheme: Type.String(),
    merchant_name: Type.String(),
    merchant_city: Type.String(),
    country: Type.String(),
    asset: Type.String({ description: 'The asset debited (the QR currency)' }),
    amount: Type.String({ description: "Decimal string at the asset's scale; no fee is charged" }),
    note: Type.Union([Type.String(), Type.Null()]),
    failure_reason: Type.Union([Type.String(), Type.Null()], {
      description:
        'When failed: `upstream_rejected` (the payment network refused), `upstream_not_found` (it never ' +
        'received the payment), `upstream_failed`, `operator`',
    }),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  { title: 'QrPayment' },
);

const IdParams = idParams('qrp_ prefix optional');
const QrCode = Type.String({
  minLength: 1,
  maxLength: 1024,
  description: 'The EMVCo merchant-presented QR payload, as scanned',
});

export const qrpayRoutes = publicRoutes((route, ctx) => {
  const { db } = ctx;

  route.get(
    '/v1/qrpay/schemes',
    readList({
      scope: 'qrpay:read',
      operationId: 'listQrpaySchemes',
      summary: 'List the QR payment schemes the service decodes',
      description: 'A bounded constant list. Only schemes whose currency is an enabled asset are `payable`.',
      tags,
      item: QrScheme,
    }),
    async () =>
      constantList(
        (await schemesWithPayable(db)).map(({ id, name, country, currency, payable }) => ({
          id,
          name,
          country,
          currency,
          payable,
        })),
      ),
  );

  route.post(
    '/v1/qrpay/decode',
    {
      access: { scope: 'qrpay:read', principal: 'member' },
      errors: qrpayErrors.decode,
      schema: {
        operationId: 'decodeQrCode',
        summary: 'Decode a merchant-presented QR code',
        description:
          'Parses an EMVCo QR (TLV, payload format indicator, CRC-16/CCITT-FALSE) and checks it with the ' +
          'payment network (read-only; sandbox injection does not affect it). `qr_code_invalid`: not ' +
          'decodable, wrong checksum, unsupported scheme, or refused by the network.',
        tags,
        body: Type.Object({ qr_code: QrCode }),
        response: { 200: DecodedQr },
      },
    },
    async ({ principal, body }) => decodeQr(ctx, principal, body.qr_code),
  );

  route.post(
    '/v1/qrpay/payments',
    memberWrite({
      scope: 'qrpay:write',
      errors: qrpayErrors.pay,
      operationId: 'createQrPayment',
      summary: "Pay a QR code from the member's balance",
      description: [
        'Freezes the amount (available → frozen) and creates the order (`processing`), then asks the ' +
          'payment network. ',
        'The answer: `completed` (the debit leaves the platform), `failed` (refused: the freeze is ' +
          'released in full) or `processing` (confirmation follows: webhook `qrpay.order.completed` / ' +
          '`.failed`). ',
        '504 `upstream_timeout` / 502 `upstream_error`: the outcome is unknown, the funds stay frozen and ' +
          'the order is reconciled with the network; ',
        'retry with the same key to resume the same order (never a second debit). While a request with the ' +
          'key runs, another one with it gets 409 `idempotency_in_progress`; afterwards, the replay. ',
        '`amount` is required when the QR has none and must equal it when it has one. No fee is charged.',
      ].join(''),
      tags,
      body: Type.Object({
        qr_code: QrCode,
        amount: Type.Optional(
          Type.String({ minLength: 1, maxLength: 80, description: "Decimal string at the asset's scale" }),
        ),
        asset: Type.String({
          minLength: 1,
          maxLength: 16,
          description: 'The funding asset: the QR currency (e.g. SGD for PayNow)',
        }),
        note: Type.Optional(
          Type.String({ maxLength: noteLengthMax * 4, description: `At most ${noteLengthMax} characters` }),
        ),
      }),
      response: { 201: QrPayment },
    }),
    {
      // The order commits in a batch under a claim on the key; the provider is called after the
      // commit, and the answer goes through the response schema and replaces the claim.
      prepare: async ({ principal, idempotency, body }) => paymentPlan(principal, idempotency, body),
      claim: {
        leaseMs: claimLeaseMs(ctx),
        commit: (trx, plan) => openPayment(ctx, trx, plan),
        after: (plan, opened) => finishPayment(ctx, plan, opened),
      },
    },
  );

  route.get(
    '/v1/qrpay/payments/:id',
    readOne({
      scope: 'qrpay:read',
      errors: qrpayErrors.get,
      operationId: 'getQrPayment',
      summary: 'Get a QR payment',
      description: memberSeesOwnOnly,
      tags,
      params: IdParams,
      response: QrPayment,
    }),
    async ({ principal, params }) => getPayment(db, principal, params.id),
  );

  route.get(
    '/v1/qrpay/payments',
    readList({
      scope: 'qrpay:read',
      operationId: 'listQrPayments',
      summary: 'List QR payments',
      description: memberListsOwn('payments'),
      tags,
      query: statusPageQuery(['processing', 'completed', 'failed', 'refunded']),
      item: QrPayment,
    }),
    async ({ principal, query }) => listPayments(db, principal, query),
  );
});
