/**
 * Writes handed straight to the write group or the batch runner (src/platform/writes/write-group.ts,
 * write-batch.ts), as a route would hand them: test/group-commit.test.ts, test/deposits-batch.test.ts.
 */
import { randomUUID } from 'node:crypto';
import type { GroupedWrite } from '../../src/platform/writes/write-batch.js';

/** A signed request's nonce of merchant `merchantId`'s sandbox, stamped now. */
export const freshNonce = (merchantId: string, nonce: string = randomUUID()) => ({
  merchantId,
  environment: 'sandbox' as const,
  nonce,
  timestampSeconds: Math.floor(Date.now() / 1000),
  nowMs: Date.now(),
});

export interface TestWrite {
  merchantId: string;
  /** The idempotency key. */
  key: string;
  effect: GroupedWrite['effect'];
  /** The request's id (default `req_<key>`). */
  requestId?: string;
  /** Of the idempotency record (default `POST /v1/test`). */
  endpoint?: string;
  /** Of the idempotency record (default `h`). */
  requestHash?: string;
  /** A signed request's nonce (none unless given). */
  nonce?: ReturnType<typeof freshNonce>;
  batch?: GroupedWrite['batch'];
}

/**
 * A write of merchant `merchantId`'s sandbox with its idempotency record not yet settled, its reply
 * serialising the body as JSON.
 */
export function groupedWrite(w: TestWrite): GroupedWrite {
  const write: GroupedWrite = {
    req: {
      id: w.requestId ?? `req_${w.key}`,
      auth: { merchantId: w.merchantId, environment: 'sandbox' },
      idempotency: {
        key: w.key,
        endpoint: w.endpoint ?? 'POST /v1/test',
        requestHash: w.requestHash ?? 'h',
        settled: false,
        noStore: false,
        now: Date.now,
        ...(w.nonce && { nonce: w.nonce }),
      },
    } as any,
    reply: {
      code() {
        return this;
      },
      serialize: (b: unknown) => JSON.stringify(b),
    } as any,
    effect: w.effect,
  };
  if (w.batch) write.batch = w.batch;
  return write;
}
