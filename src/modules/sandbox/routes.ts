import { Type } from 'typebox';
import type { AppInstance } from '../../platform/http/http-app.js';
import type { ServiceContext } from '../../service-context.js';
import { router } from '../../platform/routes/route.js';
import { sandboxStep } from '../../platform/routes/route-kinds.js';
import { injectedBehaviors, injectionTtlSeconds, upstreamNames } from '../../upstreams/port.js';
import type { TimedProcess } from '../../jobs/types.js';
import { presetBehavior, resetSandbox } from './service.js';
import { advanceClaimLeaseMs, advanceClock, advanceRunMaxMs, advanceSecondsMax, readClock } from './clock.js';
import { ensureClockRow } from './queries.js';

const tags = ['Sandbox'];

const ClockNow = Type.Object(
  {
    now: Type.String({
      format: 'date-time',
      description: "The merchant's sandbox time (ISO 8601): real time plus every advance so far",
    }),
  },
  { title: 'SandboxClock' },
);

/**
 * The sandbox tools. `timedProcesses` (src/background.ts) are what an advance of the clock runs:
 * the composition root hands them in, since a module never reads the list of another's workers.
 */
export const sandboxRoutes =
  (timedProcesses: readonly TimedProcess[]) =>
  async (app: AppInstance, ctx: ServiceContext): Promise<void> => {
    const route = router(app, ctx);

    route.get(
      '/v1/sandbox/clock',
      {
        access: { scope: 'merchant:read', principal: 'merchant', sandboxOnly: true },
        schema: {
          operationId: 'getSandboxClock',
          summary: "Read this merchant's sandbox clock",
          description:
            'Every time-dependent rule of this sandbox merchant reads this clock (docs/clock.md). It only ' +
            'moves forward; token expiry, `x-timestamp`, nonces, rate limits and idempotency stay on real ' +
            'time.',
          tags,
          response: { 200: ClockNow },
        },
      },
      async ({ principal }) => readClock(ctx, principal.merchantId),
    );

    route.post(
      '/v1/sandbox/clock/advance',
      {
        access: sandboxStep,
        errors: ['invalid_request', 'rate_limited'],
        schema: {
          operationId: 'advanceSandboxClock',
          summary: "Move this merchant's sandbox clock forward",
          description: [
            `Adds \`seconds\` (an integer from 1 to ${advanceSecondsMax}) to this merchant's sandbox time. ` +
              `Before it answers, every timed process `,
            'due before the new time (expiries, locks, accruals, executors, webhook retries) has run, ' +
              'earliest first, as if that time had passed. ',
            'Advances of one merchant run one at a time; `rate_limited` only when another one has held the ' +
              'clock for over ten minutes. ',
            `An advance steps for ${advanceRunMaxMs / 1000} seconds at most: past that the clock jumps to ` +
              `the new time and what is still due runs there afterwards (docs/clock.md).`,
          ].join(''),
          tags,
          body: Type.Object({
            seconds: Type.Integer({
              minimum: 1,
              maximum: advanceSecondsMax,
              description: 'How far to move the clock, in seconds',
            }),
          }),
          response: { 200: ClockNow },
        },
      },
      async ({ principal, body, idempotency, claim, replay }) => {
        const claimed = await claim(advanceClaimLeaseMs, async (trx) => ensureClockRow(trx, principal.merchantId));
        if ('replay' in claimed) return replay(claimed.replay);
        return advanceClock(ctx, timedProcesses, principal.merchantId, body.seconds, idempotency);
      },
    );

    route.post(
      '/v1/sandbox/upstream-behavior',
      {
        access: sandboxStep,
        schema: {
          operationId: 'setSandboxUpstreamBehavior',
          summary: "Preset how one upstream's money-moving step answers",
          description: [
            `For this merchant only, for ${injectionTtlSeconds} seconds, then back to \`success\` (which ` +
              `also clears a preset at once). `,
            'The service handles the answer exactly as in production: `reject` ends the order and releases ' +
              'the freeze; `timeout` (no bytes) and `unknown` (5xx) ',
            'leave the outcome unknown and never refund or unfreeze (reconciliation settles it); ' +
              '`unknown_status` answers `SANDBOX_UNKNOWN_STATUS`: the order is suspended and an operator ' +
              'alerted. ',
            'Read-only calls (quote, decode, status query) are not affected. `upstream` is case-insensitive; ' +
              'a value outside either enumeration is `invalid_request`.',
          ].join(''),
          tags,
          body: Type.Object({
            upstream: Type.String({
              minLength: 1,
              maxLength: 32,
              description: upstreamNames.join(', ') + ' (case-insensitive)',
            }),
            behavior: Type.String({ minLength: 1, maxLength: 32, description: injectedBehaviors.join(', ') }),
          }),
          response: {
            200: Type.Object(
              {
                ok: Type.Boolean(),
                upstream: Type.String(),
                behavior: Type.String(),
                expires_in: Type.Integer({ description: 'Seconds until the preset reverts to success' }),
              },
              { title: 'SandboxUpstreamBehavior' },
            ),
          },
        },
      },
      async ({ principal, body, write }) => write((trx) => presetBehavior(trx, principal.merchantId, body)),
    );

    route.post(
      '/v1/sandbox/reset',
      {
        access: sandboxStep,
        schema: {
          operationId: 'resetSandbox',
          summary: "Clear this merchant's sandbox logs and injected behaviours",
          description:
            'Deletes the sandbox webhook delivery records and API call logs of this merchant and removes its ' +
            'injected upstream behaviours. Ledger entries, orders and members are never deleted, so balances ' +
            'do not reset.',
          tags,
          response: {
            200: Type.Object(
              {
                ok: Type.Boolean(),
                cleared: Type.Object({
                  merchant_webhook_deliveries: Type.Integer({ description: 'Webhook delivery records deleted' }),
                  merchant_api_logs: Type.Integer({ description: 'API call log rows deleted' }),
                }),
                note: Type.String(),
              },
              { title: 'SandboxReset' },
            ),
          },
        },
      },
      async ({ principal, write }) => {
        // Buffered call-log rows are written first, so the reset counts and removes them too.
        await ctx.apiCallLog.flush();
        return write((trx) => resetSandbox(trx, principal.merchantId));
      },
    );
  };
