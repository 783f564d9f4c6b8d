/** QR payments: schemes, decoding, payments. */
import type { CreateQrPaymentBody, DecodedQr, ListEnvelope, QrPayment, QrPaymentStatus, QrScheme } from '../types.js';
import { seg, writeOpts, data, type OnBehalfOfOptions, type ResourceHost, type WriteOptions } from './shared.js';

export interface QrpayResource {
  /** GET /v1/qrpay/schemes (either principal): the `data` array. */
  schemes(opts?: { onBehalfOf?: string }): Promise<QrScheme[]>;
  /** POST /v1/qrpay/decode (on behalf of a member; read-only). */
  decode(qrCode: string, opts: OnBehalfOfOptions): Promise<DecodedQr>;
  /** POST /v1/qrpay/payments (idempotent): on `UpstreamError` retry with the same key to resume the same order. */
  pay(body: CreateQrPaymentBody, opts: OnBehalfOfOptions & WriteOptions): Promise<QrPayment>;
  /** GET /v1/qrpay/payments/{id}; `qrp_` prefix optional. */
  get(id: string, opts?: { onBehalfOf?: string }): Promise<QrPayment>;
  /** GET /v1/qrpay/payments, every page, newest first; on behalf of a member: its own. */
  list(opts?: { onBehalfOf?: string; status?: QrPaymentStatus; limit?: number }): AsyncIterable<QrPayment>;
}

export function createQrpayResource(host: ResourceHost): QrpayResource {
  return {
    schemes: (opts) =>
      data(
        host.request<ListEnvelope<QrScheme>>({
          method: 'GET',
          path: '/v1/qrpay/schemes',
          onBehalfOf: opts?.onBehalfOf,
        }),
      ),
    decode: (qrCode, opts) =>
      host.request<DecodedQr>({
        method: 'POST',
        path: '/v1/qrpay/decode',
        body: { qr_code: qrCode },
        onBehalfOf: opts.onBehalfOf,
        idempotencyKey: false,
      }),
    pay: (body, opts) =>
      host.request<QrPayment>({
        method: 'POST',
        path: '/v1/qrpay/payments',
        body,
        onBehalfOf: opts.onBehalfOf,
        ...writeOpts(opts),
      }),
    get: (id, opts) =>
      host.request<QrPayment>({ method: 'GET', path: `/v1/qrpay/payments/${seg(id)}`, onBehalfOf: opts?.onBehalfOf }),
    list: (opts) =>
      host.paginate<QrPayment>('/v1/qrpay/payments', {
        query: { status: opts?.status },
        onBehalfOf: opts?.onBehalfOf,
        limit: opts?.limit,
      }),
  };
}
