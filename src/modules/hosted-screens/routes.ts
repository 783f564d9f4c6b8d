import { Type } from 'typebox';
import type { AppInstance, RouteModule } from '../../platform/http/http-app.js';
import type { ServiceContext } from '../../service-context.js';
import { router } from '../../platform/routes/route.js';
import { merchantWrite, sandboxStep } from '../../platform/routes/route-kinds.js';
import { registerHostedPages } from './pages.js';
import { screenRegistry, sandboxOutcomes, type HostedScreen } from './screen.js';
import { completeInSandbox, getFrameAncestors, hostedScreenErrors, setFrameAncestors } from './service.js';
import { frameAncestorsMax } from './security-headers.js';

const tags = ['Hosted screens'];

export const HostedTicketState = Type.Object(
  {
    id: Type.String({ description: 'kyc_<32 hex>' }),
    hosted_url: Type.String(),
    expires_at: Type.Integer({ description: 'Unix seconds' }),
    purpose: Type.String({ description: 'kyc, profile_update, card_supplement, step_up or card_reveal' }),
    status: Type.String({ description: 'open, completed, used or void' }),
    outcome: Type.Union([Type.String(), Type.Null()], { description: 'step-up: approved or declined' }),
  },
  { title: 'HostedScreenTicketState' },
);

const FrameAncestors = Type.Object(
  {
    frame_ancestors: Type.Array(Type.String({ minLength: 1, maxLength: 300 }), {
      maxItems: frameAncestorsMax,
      description:
        `Origins allowed to embed the hosted screens in a frame (CSP frame-ancestors), at most ${frameAncestorsMax}: ` +
        ('`https://host[:port]`, the host may start with `*.`; in the sandbox also `http://` for localhost. ' +
          'Empty: no framing (the default).'),
    }),
  },
  { title: 'HostedScreenSettings' },
);

/**
 * The hosted screens (pages served on the host that issued the ticket) and their merchant calls.
 * The composition root passes every area's screens; a purpose without one shows "not available yet".
 */
export function hostedScreenRoutes(screens: readonly HostedScreen[]): RouteModule {
  const registry = screenRegistry(screens);
  return async function hostedScreens(app: AppInstance, ctx: ServiceContext): Promise<void> {
    // The pages in a scope of their own: the form body parsers and the HTML error page stay there.
    await app.register(async (pages) => registerHostedPages(pages as AppInstance, ctx, registry));
    const route = router(app, ctx);

    route.post(
      '/v1/sandbox/hosted-screens/:ticket_id/complete',
      {
        access: sandboxStep,
        errors: hostedScreenErrors.sandboxComplete,
        schema: {
          operationId: 'completeSandboxHostedScreen',
          summary: 'Complete a hosted screen without a browser (sandbox)',
          description:
            'As if the member had used the screen: `submitted` for the KYC, profile update and card ' +
            'supplement screens (valid data), ' +
            ('`approved` or `declined` for a step-up challenge. The service then handles it exactly as after ' +
              'the real screen. ') +
            ('A ticket of another merchant: 404 `not_found`; one used, void or expired by the sandbox clock: ' +
              '400 `state_invalid`; ') +
            ('an outcome the screen does not take: 400 `invalid_request`; a first-profile KYC ticket of a ' +
              'member whose profile another ticket ') +
            'already created: 409 `duplicate_resource` (its page says the details were already sent).',
          tags,
          params: Type.Object({
            ticket_id: Type.String({ minLength: 1, maxLength: 100, description: 'kyc_<32 hex>' }),
          }),
          body: Type.Object({ outcome: Type.Union(sandboxOutcomes.map((o) => Type.Literal(o))) }),
          response: { 200: HostedTicketState },
        },
      },
      async ({ principal, params, body, write }) =>
        write((trx) => completeInSandbox(ctx, trx, registry, principal, params.ticket_id, body.outcome)),
    );

    route.get(
      '/v1/hosted-screens/settings',
      {
        access: { scope: 'merchant:read', principal: 'merchant' },
        schema: {
          operationId: 'getHostedScreenSettings',
          summary: 'Read the hosted-screen settings',
          description: 'The origins allowed to frame the hosted screens in this environment.',
          tags,
          response: { 200: FrameAncestors },
        },
      },
      async ({ principal }) => getFrameAncestors(ctx.db, principal.merchantId, principal.environment),
    );

    route.put(
      '/v1/hosted-screens/settings',
      merchantWrite({
        scope: 'merchant:write',
        errors: hostedScreenErrors.putSettings,
        operationId: 'setHostedScreenSettings',
        summary: 'Set the origins allowed to frame the hosted screens',
        description:
          'Replaces the list for this environment. Each entry is an origin (no path); it is normalised ' +
          '(lower case, default port dropped) ' +
          ('and repeated entries are dropped. A refused entry: 400 `invalid_fields` with ' +
            '`frame_ancestors[<index>]` and reason `pattern` (or `too_long` past the maximum).'),
        tags,
        body: FrameAncestors,
        response: { 200: FrameAncestors },
      }),
      async ({ principal, body, write }) =>
        write((trx) => setFrameAncestors(ctx, trx, principal.merchantId, principal.environment, body.frame_ancestors)),
    );
  };
}
