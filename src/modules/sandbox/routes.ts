import { Type } from 'typebox';
import type { AppInstance } from '../../platform/http-app.js';
import type { ServiceContext } from '../../service-context.js';
import { router } from '../../platform/route.js';
import { injectedBehaviors, injectionTtlSeconds, upstreamNames } from '../../upstreams/types.js';
import { presetBehavior, resetSandbox } from './service.js';

const tags = ['Sandbox'];

export async function sandboxRoutes(app: AppInstance, ctx: ServiceContext): Promise<void> {
  const route = router(app, ctx);

  route.post('/v1/sandbox/upstream-behavior', {
    access: { scope: 'merchant:read', principal: 'merchant', idempotency: 'required', sandboxOnly: true },
    schema: {
      summary: 'Preset how one upstream\'s money-moving step answers',
      description: [
        `For this merchant only, for ${injectionTtlSeconds} seconds, then back to \`success\` (which also clears a preset at once). `,
        'The service handles the answer exactly as in production: `reject` ends the order and releases the freeze; `timeout` (no bytes) and `unknown` (5xx) ',
        'leave the outcome unknown and never refund or unfreeze (reconciliation settles it); `unknown_status` answers `SANDBOX_UNKNOWN_STATUS`: the order is suspended and an operator alerted. ',
        'Read-only calls (quote, decode, status query) are not affected. `upstream` is case-insensitive; a value outside either enumeration is `invalid_request`.',
      ].join(''),
      tags,
      body: Type.Object({
        upstream: Type.String({ minLength: 1, maxLength: 32, description: upstreamNames.join(', ') + ' (case-insensitive)' }),
        behavior: Type.String({ minLength: 1, maxLength: 32, description: injectedBehaviors.join(', ') }),
      }),
      response: {
        200: Type.Object({
          ok: Type.Boolean(),
          upstream: Type.String(),
          behavior: Type.String(),
          expires_in: Type.Integer({ description: 'Seconds until the preset reverts to success' }),
        }),
      },
    },
  }, async ({ principal, body, write }) => write((trx) => presetBehavior(trx, principal.merchantId, body)));

  route.post('/v1/sandbox/reset', {
    access: { scope: 'merchant:read', principal: 'merchant', idempotency: 'required', sandboxOnly: true },
    schema: {
      summary: 'Clear this merchant\'s sandbox logs and injected behaviours',
      description: 'Deletes the sandbox webhook delivery records and API call logs of this merchant and removes its injected upstream behaviours. Ledger entries, orders and members are never deleted, so balances do not reset.',
      tags,
      response: {
        200: Type.Object({
          ok: Type.Boolean(),
          cleared: Type.Object({
            merchant_webhook_deliveries: Type.Integer({ description: 'Webhook delivery records deleted' }),
            merchant_api_logs: Type.Integer({ description: 'API call log rows deleted' }),
          }),
          note: Type.String(),
        }),
      },
    },
  }, async ({ principal, write }) => {
    // Buffered call-log rows are written first, so the reset counts and removes them too.
    await ctx.apiCallLog.flush();
    return write((trx) => resetSandbox(trx, principal.merchantId));
  });
}
