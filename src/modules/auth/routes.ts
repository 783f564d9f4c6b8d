import { Type } from 'typebox';
import type { AppInstance } from '../../platform/http-app.js';
import type { ServiceContext } from '../../service-context.js';
import { exchangeWithLimits } from './service.js';

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
  }, async (req) => exchangeWithLimits(ctx, {
    clientId: req.headers['x-client-id'],
    apiKey: req.headers['x-api-key'],
    environment: req.environment,
    clientIp: req.ip,
  }));
}
