/**
 * Remittance: payees (with their form schema and name check), settlement dates, remittance orders.
 * One helper per call, like the other resources. Amounts are decimal strings.
 */

import type { Schemas } from '../schemas.js';
import { randomUUID } from 'node:crypto';
import type { QueryParams } from '../types.js';

export interface RemittanceHost {
  request<T = unknown>(opts: {
    method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
    path: string;
    query?: QueryParams;
    body?: unknown;
    onBehalfOf?: string;
    idempotencyKey?: string | false;
  }): Promise<T>;
  paginate<T>(path: string, opts?: { query?: QueryParams; onBehalfOf?: string; limit?: number }): AsyncIterable<T>;
}

export interface PayeeFormQuery {
  country_code?: string;
  currency?: string;
  payment_method?: 'LOCAL' | 'SWIFT' | (string & {});
  clearing_system?: string;
  entity_type?: 'INDIVIDUAL' | 'COMPANY' | (string & {});
}

export type PayeeFormField = Schemas['PayeeFormField'];

export type PayeeFormSchema = Schemas['PayeeFormSchema'];

export interface CreatePayeeBody extends PayeeFormQuery {
  nickname?: string;
  /** Flat map of contract keys (`bank_details.iban`, `address.city`, ...) to string values. */
  fields: Record<string, string>;
  [alias: string]: unknown;
}

export type PayeeCreated = Schemas['CreatePayeeResponse'];

export type Payee = Schemas['Payee'];

export type NameCheck = Schemas['PayeeNameCheck'];

export type ConversionDates = Schemas['ConversionDates'];

export interface CreateRemittanceBody {
  payee_id: string;
  source_asset: string;
  source_amount: string;
}

export type Remittance = Schemas['RemittanceOrder'];

type Member = { onBehalfOf: string };
type Key = { idempotencyKey?: string };
const seg = (id: string) => encodeURIComponent(id);

export function createRemittanceResource(host: RemittanceHost) {
  return {
    /** GET /v1/remit/payee-form-schema: walk from country to the full form. */
    formSchema: (query: PayeeFormQuery = {}) =>
      host.request<PayeeFormSchema>({ method: 'GET', path: '/v1/remit/payee-form-schema', query: { ...query } }),
    /** POST /v1/remit/payees (idempotent): 201 with outcome `created`, `linked` or `review`. */
    createPayee: (body: CreatePayeeBody, opts: Member & Key) =>
      host.request<PayeeCreated>({
        method: 'POST',
        path: '/v1/remit/payees',
        body,
        onBehalfOf: opts.onBehalfOf,
        idempotencyKey: opts.idempotencyKey ?? randomUUID(),
      }),
    /** GET /v1/remit/payees, every page: favourites first, then newest. */
    listPayees: (opts: Member & { limit?: number }) =>
      host.paginate<Payee>('/v1/remit/payees', { onBehalfOf: opts.onBehalfOf, limit: opts.limit }),
    /** GET /v1/remit/payees/{id}; `pye_` optional. */
    getPayee: (id: string, opts: Member) =>
      host.request<Payee>({ method: 'GET', path: `/v1/remit/payees/${seg(id)}`, onBehalfOf: opts.onBehalfOf }),
    /** PATCH /v1/remit/payees/{id}: nickname (empty clears) and/or favourite. */
    updatePayee: (id: string, body: { nickname?: string; favorite?: boolean }, opts: Member) =>
      host.request<Schemas['UpdatePayeeResponse']>({
        method: 'PATCH',
        path: `/v1/remit/payees/${seg(id)}`,
        body,
        onBehalfOf: opts.onBehalfOf,
        idempotencyKey: false,
      }),
    /** DELETE /v1/remit/payees/{id}: unlink (naturally idempotent). */
    unlinkPayee: (id: string, opts: Member) =>
      host.request<Schemas['DeletePayeeResponse']>({
        method: 'DELETE',
        path: `/v1/remit/payees/${seg(id)}`,
        onBehalfOf: opts.onBehalfOf,
        idempotencyKey: false,
      }),
    /** POST /v1/remit/payees/{id}/verify: name check (moves no money). */
    verifyPayee: (id: string, opts: Member) =>
      host.request<NameCheck>({
        method: 'POST',
        path: `/v1/remit/payees/${seg(id)}/verify`,
        onBehalfOf: opts.onBehalfOf,
        idempotencyKey: false,
      }),
    /** GET /v1/remit/conversion-dates (merchant principal). */
    conversionDates: (query: { currency: string; line?: 'express' | 'pobo' | (string & {}) }) =>
      host.request<ConversionDates>({ method: 'GET', path: '/v1/remit/conversion-dates', query: { ...query } }),
    /** POST /v1/remittances (idempotent, signed): freezes source_amount + fee. */
    create: (body: CreateRemittanceBody, opts: Member & Key) =>
      host.request<Remittance>({
        method: 'POST',
        path: '/v1/remittances',
        body,
        onBehalfOf: opts.onBehalfOf,
        idempotencyKey: opts.idempotencyKey ?? randomUUID(),
      }),
    /** GET /v1/remittances, every page, newest first; on behalf of a member: its own. */
    list: (opts: { onBehalfOf?: string; status?: string; limit?: number } = {}) =>
      host.paginate<Remittance>('/v1/remittances', {
        query: { status: opts.status },
        onBehalfOf: opts.onBehalfOf,
        limit: opts.limit,
      }),
    /** GET /v1/remittances/{id}; `rmt_` optional. */
    get: (id: string, opts: { onBehalfOf?: string } = {}) =>
      host.request<Remittance>({ method: 'GET', path: `/v1/remittances/${seg(id)}`, onBehalfOf: opts.onBehalfOf }),
    /** Sandbox: POST /v1/sandbox/remittances/{id}/return (idempotent): the beneficiary bank returns a completed payout
     * (`returned`; the amount back to available, the fee kept). */
    sandboxReturn: (id: string, opts: Key = {}) =>
      host.request<Remittance>({
        method: 'POST',
        path: `/v1/sandbox/remittances/${seg(id)}/return`,
        idempotencyKey: opts.idempotencyKey ?? randomUUID(),
      }),
  };
}

export type RemittanceResource = ReturnType<typeof createRemittanceResource>;
