import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { CallContext } from '../port.js';
import { decideSimKycCheck, insertSimKycCheck, selectSimKycCheck } from '../queries/kyc.js';
import type { KycCheckRequest, KycDecision, KycSubmitOutcome, KycUpstream, KycVerdictOutcome } from './port.js';

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
    const providerRef = `KY${randomBytes(8).toString('hex').toUpperCase()}`;
    await insertSimKycCheck(this.db, {
      requestId: req.requestId,
      merchantId: call.merchantId,
      environment: call.environment,
      providerRef,
      now: await this.now(call),
    });
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
    return decideSimKycCheck(this.db, requestId, status, detail, await this.now(call));
  }

  private find(requestId: string) {
    return selectSimKycCheck(this.db, requestId);
  }
}
