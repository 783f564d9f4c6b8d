import type { Environment, Db } from '../db/schema.js';
import { selectSandboxOffset, selectSandboxOffsets } from './queries/clock.js';

/**
 * The scope's time as SQL, for the money core and the events: of the platform they import only ids
 * and the clock (test/route-helper.test.ts, "they import no HTTP module"). Others take it from
 * queries/clock.ts, its home.
 */
export { scopeNowSql } from './queries/clock.js';

/** Whose time a rule runs on: each sandbox merchant has a clock of its own (extensions 8). */
export interface ClockScope {
  merchantId: string;
  environment: Environment;
}

/**
 * The one clock every time-dependent rule reads (ticket and challenge expiry, quote expiry,
 * locks, accrual, executors, retries). Production runs on real time; in the sandbox a merchant's
 * time is real time plus the offset its `POST /v1/sandbox/clock/advance` calls have added, so it
 * only moves forward. The offset lives in the database, so every process sees the same time.
 * The request-security windows (token expiry, `x-timestamp`, nonces, rate limits, idempotency)
 * never read this clock: they stay on real time (`ServiceContext.requestClock`).
 */
export interface Clock {
  /** Real time. */
  real(): Date;
  /** The scope's time, read in the caller's transaction when one is given. */
  now(db: Db, scope: ClockScope): Promise<Date>;
  /** The scope's offset from real time in milliseconds (0 in production and for a merchant never advanced). */
  offsetMs(db: Db, scope: ClockScope): Promise<bigint>;
  /** `now` of many scopes (a batch of writes), read in one statement. */
  nowOfEach(db: Db, scopes: readonly ClockScope[]): Promise<Date[]>;
}

export function createClock(realNow: () => number = Date.now): Clock {
  const clock: Clock = {
    real: () => new Date(realNow()),
    async offsetMs(db, scope) {
      if (scope.environment !== 'sandbox') return 0n;
      return selectSandboxOffset(db, scope.merchantId);
    },
    async now(db, scope) {
      const offset = await clock.offsetMs(db, scope);
      return new Date(realNow() + Number(offset));
    },
    async nowOfEach(db, scopes) {
      const sandbox = scopes.filter((s) => s.environment === 'sandbox').map((s) => s.merchantId);
      const offsets = sandbox.length > 0 ? await selectSandboxOffsets(db, sandbox) : new Map<string, bigint>();
      const real = realNow();
      return scopes.map(
        (s) => new Date(real + (s.environment === 'sandbox' ? Number(offsets.get(s.merchantId) ?? 0n) : 0)),
      );
    },
  };
  return clock;
}
