import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { CallContext } from '../port.js';
import type { KycCheckRequest, KycDecision, KycSubmitOutcome, KycUpstream, KycVerdictOutcome } from './port.js';

const upstream = 'kyc';

/**
 * The built-in simulator. Its books are rows of `upstream_sim_orders` (upstream `kyc`, written
 * outside our transactions, as a provider's would be): `processing` while the check waits,
 * `succeeded` for approved, `failed` for rejected, the level and reason in `detail`. It never
 * decides on its own: every check waits for a reviewer, the sandbox helper playing that part.
 */
export class SimulatedKyc implements KycUpstream {
  readonly name = 'kyc' as const;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly now: (call: CallContext) => Date | Promise<Date>,
  ) {}

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
    return row
      ? { kind: 'accepted', providerRef: row.provider_order_id }
      : { kind: 'unknown', reason: 'the check was not recorded' };
  }

  async verdict(_call: CallContext, requestId: string): Promise<KycVerdictOutcome> {
    const row = await this.find(requestId);
    if (!row) return { kind: 'not_found' };
    if (row.status === 'processing') return { kind: 'pending' };
    const detail = (typeof row.detail === 'string' ? JSON.parse(row.detail) : row.detail) as Record<string, string>;
    if (row.status === 'succeeded')
      return { kind: 'decided', decision: 'approved', level: detail.level === '2' ? 2 : 1 };
    return { kind: 'decided', decision: 'rejected', ...(detail.reason ? { reason: detail.reason } : {}) };
  }

  async sandboxDecide(call: CallContext, requestId: string, v: KycDecision): Promise<boolean> {
    const detail =
      v.decision === 'approved'
        ? { level: String(v.level ?? 1) }
        : { reason: v.reason ?? 'rejected by the sandbox reviewer' };
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
    return this.db
      .selectFrom('upstream_sim_orders')
      .selectAll()
      .where('upstream', '=', upstream)
      .where('request_id', '=', requestId)
      .executeTakeFirst();
  }
}
