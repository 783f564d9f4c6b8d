import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { CallContext } from './types.js';

/**
 * The identity-verification provider. The service sends it each submitted profile (a "check",
 * keyed by our request id: the profile id and the submission number) and reads its verdict.
 * Images never leave the service in this interface: a real adapter would fetch them through its
 * own secure channel; the check carries what the provider needs to match them.
 */
export interface KycUpstream {
  readonly name: 'kyc';
  /** Starts a check (idempotent by `requestId`): accepted with the provider's reference, or no answer. */
  submit(call: CallContext, req: KycCheckRequest): Promise<KycSubmitOutcome>;
  /** Read-only: the verdict of a check, by our request id. */
  verdict(call: CallContext, requestId: string): Promise<KycVerdictOutcome>;
  /**
   * Sandbox only, on adapters that can play the provider (the simulator): decides a check as the
   * provider's reviewer would. `POST /v1/sandbox/kyc/{member_id}/review` uses it.
   */
  sandboxDecide?(call: CallContext, requestId: string, verdict: KycDecision): Promise<boolean>;
}

export interface KycCheckRequest {
  requestId: string;
  memberRef: string;
  firstName: string;
  lastName: string;
  birthDate: string;
  nationality: string;
  documentType: string;
  documentNumber: string;
  addressCountry: string;
  /** Image references (our ids), for the provider to fetch. */
  imageRefs: string[];
}

export interface KycDecision {
  decision: 'approved' | 'rejected';
  level?: 1 | 2;
  reason?: string;
}

export type KycSubmitOutcome =
  | { kind: 'accepted'; providerRef: string }
  | { kind: 'timeout' }
  | { kind: 'unknown'; reason: string };

export type KycVerdictOutcome =
  | { kind: 'pending' }
  | ({ kind: 'decided' } & KycDecision)
  | { kind: 'not_found' }
  | { kind: 'timeout' }
  | { kind: 'unknown'; reason: string };

const upstream = 'kyc';

/**
 * The built-in simulator. Its books are rows of `upstream_sim_orders` (upstream `kyc`, written
 * outside our transactions, as a provider's would be): `processing` while the check waits,
 * `succeeded` for approved, `failed` for rejected, the level and reason in `detail`. It never
 * decides on its own: every check waits for a reviewer, the sandbox helper playing that part.
 */
export class SimulatedKyc implements KycUpstream {
  readonly name = 'kyc' as const;

  constructor(private readonly db: Kysely<Database>, private readonly now: (call: CallContext) => Date | Promise<Date>) {}

  async submit(call: CallContext, req: KycCheckRequest): Promise<KycSubmitOutcome> {
    await this.db
      .insertInto('upstream_sim_orders')
      .values({
        upstream,
        request_id: req.requestId,
        merchant_id: call.merchantId,
        environment: call.environment,
        provider_order_id: `KY${randomBytes(8).toString('hex').toUpperCase()}`,
        operation: 'kyc_check',
        status: 'processing',
        final_status: 'processing',
        settle_at: new Date('9999-12-31T00:00:00Z'),
        detail: JSON.stringify({}),
        updated_at: await this.now(call),
      })
      .onConflict((oc) => oc.columns(['upstream', 'request_id']).doNothing())
      .execute();
    const row = await this.find(req.requestId);
    return row ? { kind: 'accepted', providerRef: row.provider_order_id } : { kind: 'unknown', reason: 'the check was not recorded' };
  }

  async verdict(_call: CallContext, requestId: string): Promise<KycVerdictOutcome> {
    const row = await this.find(requestId);
    if (!row) return { kind: 'not_found' };
    if (row.status === 'processing') return { kind: 'pending' };
    const detail = (typeof row.detail === 'string' ? JSON.parse(row.detail) : row.detail) as Record<string, string>;
    if (row.status === 'succeeded') return { kind: 'decided', decision: 'approved', level: detail.level === '2' ? 2 : 1 };
    return { kind: 'decided', decision: 'rejected', ...(detail.reason ? { reason: detail.reason } : {}) };
  }

  async sandboxDecide(call: CallContext, requestId: string, v: KycDecision): Promise<boolean> {
    const detail = v.decision === 'approved' ? { level: String(v.level ?? 1) } : { reason: v.reason ?? 'rejected by the sandbox reviewer' };
    const status = v.decision === 'approved' ? 'succeeded' : 'failed';
    const row = await this.db
      .updateTable('upstream_sim_orders')
      .set({ status, final_status: status, detail: JSON.stringify(detail), updated_at: await this.now(call) })
      .where('upstream', '=', upstream)
      .where('request_id', '=', requestId)
      .where('status', '=', 'processing')
      .returning('request_id')
      .executeTakeFirst();
    return row !== undefined;
  }

  private find(requestId: string) {
    return this.db.selectFrom('upstream_sim_orders').selectAll().where('upstream', '=', upstream).where('request_id', '=', requestId).executeTakeFirst();
  }
}
