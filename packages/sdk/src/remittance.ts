/**
 * Remittance: payees (with their form schema and name check), settlement dates, remittance orders.
 * One helper per call, like resources.ts. Amounts are decimal strings.
 */
import { randomUUID } from 'node:crypto';
import type { QueryParams } from './types.js';

export interface RemittanceHost {
  request<T = unknown>(opts: { method: 'GET' | 'POST' | 'PATCH' | 'DELETE'; path: string; query?: QueryParams; body?: unknown; onBehalfOf?: string; idempotencyKey?: string | false }): Promise<T>;
  paginate<T>(path: string, opts?: { query?: QueryParams; onBehalfOf?: string; limit?: number }): AsyncIterable<T>;
}

export interface PayeeFormQuery {
  country_code?: string;
  currency?: string;
  payment_method?: 'LOCAL' | 'SWIFT' | (string & {});
  clearing_system?: string;
  entity_type?: 'INDIVIDUAL' | 'COMPANY' | (string & {});
}

export interface PayeeFormField {
  key: string;
  label: string;
  type: string;
  required: boolean;
  max_length: number;
  pattern: string | null;
  enum: string[] | null;
  example: string | null;
  description: string | null;
  group: string | null;
  account_identifier: string | null;
  value: string | null;
  refresh_on_change: boolean;
  [extra: string]: unknown;
}

export interface PayeeFormSchema {
  step: string;
  selection: Record<string, string | null>;
  fields: PayeeFormField[];
  [extra: string]: unknown;
}

export interface CreatePayeeBody extends PayeeFormQuery {
  nickname?: string;
  /** Flat map of contract keys (`bank_details.iban`, `address.city`, ...) to string values. */
  fields: Record<string, string>;
  [alias: string]: unknown;
}

export interface PayeeCreated {
  id: string;
  outcome: 'created' | 'linked' | 'review';
  status: 'active' | (string & {});
  [extra: string]: unknown;
}

export interface Payee {
  id: string;
  status: string;
  /** Empty when none. */
  nickname: string;
  favorite: boolean;
  country_code: string;
  currency: string;
  payment_method: string;
  clearing_system: string;
  entity_type: string;
  holder_name: string;
  /** Masked. */
  account_identifier: string;
  fields: Record<string, string>;
  outcome: string;
  name_mismatch: boolean;
  name_check: { result: string; suggested_name: string | null; checked_at: string } | null;
  created_at: string;
  updated_at: string;
  [extra: string]: unknown;
}

export interface NameCheck {
  id: string;
  result: 'match' | 'close_match' | 'no_match' | 'unavailable';
  suggested_name: string | null;
  checked_at: string;
  [extra: string]: unknown;
}

export interface ConversionDates {
  settlement_currency: string;
  payout_currency: string;
  same_currency: boolean;
  dates: Array<{ date: string; valid: boolean }>;
  earliest_valid: string;
  [extra: string]: unknown;
}

export interface CreateRemittanceBody {
  payee_id: string;
  source_asset: string;
  source_amount: string;
}

export interface Remittance {
  id: string;
  payee_id: string;
  status: 'pending' | 'processing' | 'completed' | 'failed' | 'returned' | (string & {});
  status_version: number;
  source_asset: string;
  source_amount: string;
  fee: string;
  payout_currency: string;
  payout_amount: string;
  rate: string;
  payout_date: string | null;
  created_at: string;
  [extra: string]: unknown;
}

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
      host.request<PayeeCreated>({ method: 'POST', path: '/v1/remit/payees', body, onBehalfOf: opts.onBehalfOf, idempotencyKey: opts.idempotencyKey ?? randomUUID() }),
    /** GET /v1/remit/payees, every page: favourites first, then newest. */
    listPayees: (opts: Member & { limit?: number }) => host.paginate<Payee>('/v1/remit/payees', { onBehalfOf: opts.onBehalfOf, limit: opts.limit }),
    /** GET /v1/remit/payees/{id}; `pye_` optional. */
    getPayee: (id: string, opts: Member) => host.request<Payee>({ method: 'GET', path: `/v1/remit/payees/${seg(id)}`, onBehalfOf: opts.onBehalfOf }),
    /** PATCH /v1/remit/payees/{id}: nickname (empty clears) and/or favourite. */
    updatePayee: (id: string, body: { nickname?: string; favorite?: boolean }, opts: Member) =>
      host.request<{ id: string; nickname: string; favorite: boolean }>({ method: 'PATCH', path: `/v1/remit/payees/${seg(id)}`, body, onBehalfOf: opts.onBehalfOf, idempotencyKey: false }),
    /** DELETE /v1/remit/payees/{id}: unlink (naturally idempotent). */
    unlinkPayee: (id: string, opts: Member) =>
      host.request<{ id: string; status: 'unlinked' }>({ method: 'DELETE', path: `/v1/remit/payees/${seg(id)}`, onBehalfOf: opts.onBehalfOf, idempotencyKey: false }),
    /** POST /v1/remit/payees/{id}/verify: name check (moves no money). */
    verifyPayee: (id: string, opts: Member) =>
      host.request<NameCheck>({ method: 'POST', path: `/v1/remit/payees/${seg(id)}/verify`, onBehalfOf: opts.onBehalfOf, idempotencyKey: false }),
    /** GET /v1/remit/conversion-dates (merchant principal). */
    conversionDates: (query: { currency: string; line?: 'express' | 'pobo' | (string & {}) }) =>
      host.request<ConversionDates>({ method: 'GET', path: '/v1/remit/conversion-dates', query: { ...query } }),
    /** POST /v1/remittances (idempotent, signed): freezes source_amount + fee. */
    create: (body: CreateRemittanceBody, opts: Member & Key) =>
      host.request<Remittance>({ method: 'POST', path: '/v1/remittances', body, onBehalfOf: opts.onBehalfOf, idempotencyKey: opts.idempotencyKey ?? randomUUID() }),
    /** GET /v1/remittances, every page, newest first; on behalf of a member: its own. */
    list: (opts: { onBehalfOf?: string; status?: string; limit?: number } = {}) =>
      host.paginate<Remittance>('/v1/remittances', { query: { status: opts.status }, onBehalfOf: opts.onBehalfOf, limit: opts.limit }),
    /** GET /v1/remittances/{id}; `rmt_` optional. */
    get: (id: string, opts: { onBehalfOf?: string } = {}) => host.request<Remittance>({ method: 'GET', path: `/v1/remittances/${seg(id)}`, onBehalfOf: opts.onBehalfOf }),
    /** Sandbox: POST /v1/sandbox/remittances/{id}/return (idempotent): the beneficiary bank returns a completed payout (`returned`; the amount back to available, the fee kept). */
    sandboxReturn: (id: string, opts: Key = {}) =>
      host.request<Remittance>({ method: 'POST', path: `/v1/sandbox/remittances/${seg(id)}/return`, idempotencyKey: opts.idempotencyKey ?? randomUUID() }),
  };
}

export type RemittanceResource = ReturnType<typeof createRemittanceResource>;
