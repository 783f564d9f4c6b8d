import { Type } from 'typebox';
import type { AppInstance } from '../../platform/http/http-app.js';
import type { ServiceContext } from '../../service-context.js';
import { router } from '../../platform/routes/route.js';
import { exchangeErrors, exchangeWithLimits } from './service.js';

const TokenResponse = Type.Object(
  {
    auth_token: Type.String(),
    expired_at: Type.Integer({ description: 'Unix seconds; 30 minutes after issue' }),
    token_type: Type.Literal('Bearer'),
    scopes: Type.Array(Type.String()),
  },
  { title: 'AccessToken' },
);

export async function authRoutes(app: AppInstance, ctx: ServiceContext): Promise<void> {
  router(app, ctx).post(
    '/v1/connect/token',
    {
      access: { scope: 'public' },
      errors: exchangeErrors,
      schema: {
        operationId: 'createToken',
        summary: 'Exchange an API key for an access token',
        tags: ['Authentication'],
        headers: Type.Object({
          'x-client-id': Type.Optional(Type.String()),
          'x-api-key': Type.Optional(Type.String()),
        }),
        response: { 200: TokenResponse },
      },
    },
    async ({ headers, req }) =>
      exchangeWithLimits(ctx, {
        clientId: headers['x-client-id'],
        apiKey: headers['x-api-key'],
        environment: req.environment,
        clientIp: req.ip,
      }),
  );
}
