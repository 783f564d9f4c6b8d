import { Type } from 'typebox';
import type { AppInstance } from '../platform/http/http-app.js';
import type { ServiceContext } from '../service-context.js';
import { OperatorIdParams as IdParams, Time, TimeOrNull, operatorRouter } from '../platform/routes/operator-route.js';
import { consoleErrors, inviteUser, listConsoleUsers, patchUser, resetSecondFactor } from './service.js';
import { consoleRoles } from './rules.js';

const Role = Type.Union(
  consoleRoles.map((r) => Type.Literal(r)),
  { description: 'owner (everything, the audit log), developer (keys, webhooks, sandbox tools), viewer (reads only)' },
);
const ConsoleUser = Type.Object(
  {
    id: Type.String({ description: 'cus_<uuid>' }),
    merchant_id: Type.String(),
    email: Type.String(),
    role: Type.String(),
    status: Type.String({ description: 'invited, active or disabled' }),
    invite_expires_at: TimeOrNull,
    two_step: Type.Boolean({ description: 'whether sign-in asks for a second factor (TOTP code or recovery code)' }),
    created_at: Time,
  },
  { title: 'ConsoleUser' },
);

/** Operator calls of the merchant console: its users (docs/console.md). */
export async function consoleOperatorRoutes(app: AppInstance, ctx: ServiceContext): Promise<void> {
  const route = operatorRouter(app, ctx);

  route.post(
    '/admin/v1/merchants/:id/console-users',
    {
      errors: consoleErrors.invite,
      schema: {
        operationId: 'createConsoleUser',
        params: IdParams,
        body: Type.Object({ email: Type.String({ minLength: 3, maxLength: 254 }), role: Role }),
        response: {
          201: Type.Object({
            ...ConsoleUser.properties,
            invite_path: Type.String({ description: '/console/invite/<token>: shown once, valid 7 days' }),
          }),
        },
      },
    },
    ({ params, body, write }) => write((trx) => inviteUser(trx, params.id, body, ctx.clock.real())),
  );

  route.get(
    '/admin/v1/merchants/:id/console-users',
    {
      errors: ['not_found'],
      schema: {
        operationId: 'listConsoleUsers',
        params: IdParams,
        response: { 200: Type.Object({ data: Type.Array(ConsoleUser) }) },
      },
    },
    ({ params }) => listConsoleUsers(ctx.db, params.id),
  );

  route.patch(
    '/admin/v1/console-users/:id',
    {
      errors: consoleErrors.patchUser,
      schema: {
        operationId: 'updateConsoleUser',
        params: IdParams,
        body: Type.Object({ role: Type.Optional(Role), disabled: Type.Optional(Type.Boolean()) }),
        response: { 200: ConsoleUser },
      },
    },
    ({ params, body, write }) => write((trx) => patchUser(trx, params.id, body, ctx.clock.real())),
  );

  route.post(
    '/admin/v1/console-users/:id/second-factor/reset',
    {
      errors: consoleErrors.resetSecondFactor,
      schema: {
        operationId: 'resetConsoleUserSecondFactor',
        summary: "Reset a console user's second factor",
        description:
          'For a user who lost the phone: turns two-step sign-in off (the TOTP secret and every recovery ' +
          "code are deleted) and ends every session of the user; written in the merchant's console audit " +
          'log. The user then signs in with the password alone and can set up a new factor. Repeatable: a ' +
          'user without a second factor is answered the same (its sessions end).',
        params: IdParams,
        response: {
          200: Type.Object({
            ...ConsoleUser.properties,
            sessions_ended: Type.Integer({ minimum: 0, description: 'sessions of the user this call ended' }),
          }),
        },
      },
    },
    ({ params, write }) => write((trx) => resetSecondFactor(trx, params.id, ctx.clock.real())),
  );
}
