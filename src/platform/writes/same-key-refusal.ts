// A refusal that keeps the key for a retry with the same key (step_up_required): docs/idempotency.md.
import type { Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import { ApiError, type ErrorCode, type ErrorExtras } from '../errors.js';

/**
 * What a `SameKeyRefusal` does besides refusing: `persist` writes the refusal's own record (a new
 * step-up challenge) in a transaction that commits although the effect is rolled back, and
 * answers the extra fields the error body carries; `afterCommit` runs once that record is
 * committed (sending the challenge's one-time code: an outside call never runs in a transaction).
 */
export interface SameKeyWork {
  persist: (trx: Transaction<Database>) => Promise<ErrorExtras>;
  afterCommit?: () => Promise<void>;
}

/**
 * A refusal that is not the key's result (the reference's retry rules: `step_up_required` is
 * retried with the same key after the hosted screen). In a write (`executeWrite`, `claimWrite`)
 * the effect is rolled back, `work.persist` runs and commits in its place, and the key keeps a
 * reservation instead of a result: the same key with the same body runs anew, another body or
 * endpoint is still 409 `idempotency_key_reused`. See docs/idempotency.md.
 */
export class SameKeyRefusal extends ApiError {
  constructor(
    code: ErrorCode,
    message: string | undefined,
    private readonly work: SameKeyWork,
  ) {
    super(code, message, {});
  }

  /** Writes the refusal's own record in `trx` and completes the body's extra fields with what it answers. */
  async persist(trx: Transaction<Database>): Promise<void> {
    Object.assign(this.extras, await this.work.persist(trx));
  }

  async afterCommit(): Promise<void> {
    await this.work.afterCommit?.();
  }
}

/** Once a refusal's transaction committed: a `SameKeyRefusal`'s work after commit; answers the refusal to throw. */
export async function afterRefusal(refusal: ApiError): Promise<ApiError> {
  if (refusal instanceof SameKeyRefusal) await refusal.afterCommit();
  return refusal;
}
