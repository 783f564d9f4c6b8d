import type { FastifyRequest } from 'fastify';
import type { AppInstance, RouteModule } from '../platform/http/http-app.js';
import type { ServiceContext } from '../service-context.js';
import type { TimedProcess } from '../jobs/types.js';
import { ApiError } from '../platform/errors.js';
import { html } from '../modules/hosted-screens/index.js';
import { consoleSecurityHeaders, sendHtml } from './http.js';
import { ConsoleFormError, formBodyBytesMax, parseForm } from './form.js';
import { registerAuthPages } from './auth-pages.js';
import { registerTwoStepPages } from './two-step-pages.js';
import { registerKeyPages } from './key-pages.js';
import { registerOneKeyPages } from './one-key-pages.js';
import { registerWebhookPages } from './webhook-pages.js';
import { registerDeliveryPages } from './delivery-pages.js';
import { registerEventPages } from './event-pages.js';
import { registerEndpointPages } from './endpoint-pages.js';
import { registerMoneyPages } from './money-pages.js';
import { registerDepositPages } from './deposit-pages.js';
import { registerLedgerPages } from './ledger-pages.js';
import { registerExportPages } from './export-pages.js';
import { registerAreaPages } from './area-pages.js';
import { registerCardPages } from './card-pages.js';
import { registerHelperPages, type HostedScreenRegistry } from './helper-pages.js';
import { registerSettingsPages } from './settings-pages.js';
import { registerAuditPages } from './audit-pages.js';
import { registerAccountPages } from './account-pages.js';
import { registerBrandingPages } from './branding-pages.js';
import { consoleStylesheet } from './stylesheet.js';
import { plainPage, stylesheetPath } from './views.js';
import { pageRoute } from './guards.js';

/**
 * The merchant console (docs/console.md): server-rendered pages under /console on the public
 * listener, in a scope of their own (form bodies, HTML error pages, security headers). The
 * composition root hands in the timed processes, which the sandbox clock runs.
 */
export function consoleRoutes(timedProcesses: readonly TimedProcess[], screens: HostedScreenRegistry): RouteModule {
  return async function consolePages(app: AppInstance, ctx: ServiceContext): Promise<void> {
    await app.register(async (scope) => {
      const pages = scope as AppInstance;
      // A form that does not parse rejects the promise: Fastify hands the error to the handler below.
      pages.addContentTypeParser(
        'application/x-www-form-urlencoded',
        { parseAs: 'string', bodyLimit: formBodyBytesMax },
        async (_req: FastifyRequest, body: string) => parseForm(body),
      );
      pages.setErrorHandler((err: any, req, reply) => {
        const notFound = err instanceof ApiError && err.code === 'not_found';
        const clientFault =
          notFound ||
          err instanceof ConsoleFormError ||
          err instanceof ApiError ||
          (typeof err?.statusCode === 'number' && err.statusCode >= 400 && err.statusCode < 500);
        if (!clientFault) req.log.error({ err }, 'console page failed');
        const [status, title, text] = notFound
          ? [404, 'Not found', 'There is nothing at this address.']
          : clientFault
            ? [400, 'The request could not be read', 'Go back and try again.']
            : [500, 'Something went wrong', 'Try again in a minute.'];
        void sendHtml(
          reply,
          status,
          plainPage(title, html`<p>${text}</p><p><a href="/console">Open the console</a></p>`),
        );
      });
      pages.addHook('onSend', async (req, reply, payload) => {
        if (!reply.hasHeader('content-security-policy')) void reply.headers(consoleSecurityHeaders);
        // Over HTTPS (as the connection or a trusted proxy says), browsers keep to it for a year.
        if (req.protocol === 'https') void reply.header('strict-transport-security', 'max-age=31536000');
        // Key changes made here take effect in this process before the page answers (the
        // database's notification tells the other processes; docs/performance.md).
        if (req.method === 'POST') ctx.authCache.invalidate();
        return payload;
      });
      pages.get(stylesheetPath, pageRoute, async (_req, reply) =>
        reply
          .headers({ ...consoleSecurityHeaders, 'cache-control': 'public, max-age=300' })
          .type('text/css; charset=utf-8')
          .send(consoleStylesheet),
      );
      registerAuthPages(pages, ctx);
      registerTwoStepPages(pages, ctx);
      registerKeyPages(pages, ctx);
      registerOneKeyPages(pages, ctx);
      registerWebhookPages(pages, ctx);
      registerDeliveryPages(pages, ctx);
      registerEventPages(pages, ctx);
      registerEndpointPages(pages, ctx);
      registerMoneyPages(pages, ctx);
      registerDepositPages(pages, ctx);
      registerLedgerPages(pages, ctx);
      registerExportPages(pages, ctx);
      registerAreaPages(pages, ctx);
      registerCardPages(pages, ctx);
      registerHelperPages(pages, ctx, screens);
      registerSettingsPages(pages, ctx, timedProcesses);
      registerAuditPages(pages, ctx);
      registerAccountPages(pages, ctx);
      registerBrandingPages(pages, ctx);
    });
  };
}
