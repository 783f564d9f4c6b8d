import { Type } from 'typebox';
import type { AppInstance } from '../../platform/http-app.js';
import type { ServiceContext } from '../../service-context.js';
import { exchangeToken } from '../../platform/auth.js';
import { consume } from '../../platform/rate-limit.js';
import { rateLimitsPerMinute } from '../../platform/route-access.js';

const TokenResponse = Type.Object({
  auth_token: Type.String(),
  expired_at: Type.Integer({ description: 'Unix seconds; 30 minutes after issue' }),
  token_type: Type.Literal('Bearer'),
  scopes: Type.Array(Type.String()),
});

export async function authRoutes(app: AppInstance, ctx: ServiceContext): Promise<void> {
  app.post('/v1/connect/token', {
    config: { access: { scope: 'public', errors: ['invalid_credentials', 'environment_mismatch', 'ip_not_allowed', 'merchant_disabled', 'rate_limited'] } },
    schema: {
      summary: 'Exchange an API key for an access token',
      tags: ['Authentication'],
      headers: Type.Object({ 'x-client-id': Type.Optional(Type.String()), 'x-api-key': Type.Optional(Type.String()) }),
      response: { 200: TokenResponse },
    },
  }, async (req) => {
    const clientId = req.headers['x-client-id'];
    // Counted per presented client id, failures included: a wrong key must not be retried in a loop.
    if (clientId) await consume(ctx.db, `client:${clientId}`, 'token_exchange', rateLimitsPerMinute.token_exchange * ctx.config.rateLimitScale);
    const { result } = await exchangeToken(ctx.db, {
      clientId,
      apiKey: req.headers['x-api-key'],
      environment: req.environment,
      clientIp: req.ip,
      ttlSeconds: ctx.tokenTtlSeconds,
    });
    return result;
  });
}
