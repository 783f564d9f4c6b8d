/** QR pay's read-only services: a QR checked before paying, one payment, the lists. */
import type { ServiceContext } from '../../service-context.js';
import { ApiError } from '../../platform/errors.js';
import { type PageParams } from '../../platform/routes/pagination.js';
import { keysetPage } from '../../db/keyset-page.js';
import { assetScale, listAssets, pageAtScale } from '../assets/index.js';
import { qrAmountText, readQr } from './decode.js';
import { callOf, safely } from './provider.js';
import { findOrder, openOrdersQuery, paymentsQuery, payableAsset, type Db } from './queries.js';
import { qrSchemes } from './schemes.js';
import type { PublicStatus } from './state.js';
import { operatorOrderView, orderView } from './views.js';
import type { Caller } from '../../platform/caller.js';

function upstreamCheckError(kind: 'refused' | 'timeout' | 'unknown'): ApiError {
  if (kind === 'refused') return new ApiError('qr_code_invalid', 'The QR code was refused by the payment network.');
  return kind === 'timeout' ? new ApiError('upstream_timeout') : new ApiError('upstream_error');
}

/** The scheme catalogue, each scheme `payable` while its currency is an enabled fiat asset. */
export async function schemesWithPayable(db: Db) {
  const enabled = new Set(
    (await listAssets(db, { enabledOnly: true })).filter((a) => a.type === 'fiat').map((a) => a.code),
  );
  return qrSchemes.map((s) => ({ ...s, payable: enabled.has(s.currency) }));
}

/** POST /v1/qrpay/decode: what the QR says, checked with the provider (read-only). */
export async function decodeQr(ctx: ServiceContext, caller: Caller, qrCode: string) {
  const { decoded, scheme, account } = readQr(qrCode);
  const check = await safely(ctx, () =>
    ctx.upstreams.qrpay.check(callOf(caller), { scheme: scheme.id, merchantAccount: account.account }),
  );
  if (check.kind !== 'ok') throw upstreamCheckError(check.kind);
  const asset = await payableAsset(ctx.db, scheme, decoded);
  const amount = qrAmountText(decoded, asset?.scale);
  return {
    scheme: scheme.id,
    scheme_name: scheme.name,
    payable: asset !== undefined,
    merchant_name: decoded.merchantName,
    merchant_city: decoded.merchantCity,
    country: decoded.country,
    currency: decoded.currency,
    amount,
    merchant_category_code: decoded.merchantCategoryCode,
    point_of_initiation: decoded.pointOfInitiation,
    reference: decoded.reference,
  };
}

export async function getPayment(db: Db, caller: Caller, id: string) {
  const row = await findOrder(db, id, caller);
  if (!row) throw new ApiError('not_found', 'No such QR payment.');
  return orderView(row, await assetScale(db, row.asset));
}

/** The caller's payments (a member's: its own), newest first. */
export async function listPayments(db: Db, caller: Caller, query: PageParams & { status?: PublicStatus }) {
  return pageAtScale(db, await keysetPage(paymentsQuery(db, caller, query.status), query), orderView);
}

/** Open orders for the operator's reconciliation view, newest first (bounded page). */
export async function listOpenOrders(db: Db, query: PageParams & { merchant_id?: string }) {
  return pageAtScale(db, await keysetPage(openOrdersQuery(db, query.merchant_id), query), operatorOrderView);
}
