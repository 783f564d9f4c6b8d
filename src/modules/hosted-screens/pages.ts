import multipart from '@fastify/multipart';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppInstance } from '../../platform/http/http-app.js';
import type { ServiceContext } from '../../service-context.js';
import { ApiError } from '../../platform/errors.js';
import { configuredKey } from '../../platform/auth/keys.js';
import {
  csrfCookieName,
  csrfSetCookie,
  csrfToken,
  cookieFrom,
  isCsrfCookieValue,
  newCsrfCookieValue,
  verifyCsrf,
} from './csrf.js';
import { FormBodyError, multipartLimits, parseUrlencoded, readFormBody, urlencodedBodyMaxBytes } from './form-body.js';
import {
  csrfFieldName,
  renderPage,
  stylesheetPath,
  unavailablePage,
  type FormFrame,
  type MerchantShell,
} from './html.js';
import { accentPath, accentStylesheet, logoPath, readBranding, readLogo } from './branding.js';
import { findTicket, frameAncestorsOf } from './queries.js';
import { isTicketHost, isUsable, type Ticket } from './rules.js';
import type { ScreenRegistry, ScreenState } from './screen.js';
import { hostedSecurityHeaders } from './security-headers.js';
import { stylesheet } from './stylesheet.js';
import { rowScope } from '../../db/owned-by.js';

/**
 * The hosted pages: `GET /hosted/:ticket_id` shows a ticket's screen, `POST /hosted/:ticket_id`
 * submits it, `GET /hosted/assets/screen.css` is the one stylesheet, `GET /hosted/branding/:merchant_id/logo`
 * and `/accent.css` the merchant's branding (branding.ts). Public (the ticket is the
 * credential), answered in HTML with the security headers on every response, including refusals.
 * A ticket that is unknown or was issued on another host: 404; expired by the merchant's clock,
 * spent, void, or its member no longer active: 410. Neither page says which.
 */

const access = { access: { scope: 'public' as const } };
const hidden = { hide: true };

interface Opened {
  ticket: Ticket;
  now: Date;
  frameAncestors: string[];
}

type Refusal = { refused: 404 | 410; frameAncestors: string[] };

function ticketIdOf(req: FastifyRequest): string {
  return (req.params as { ticket_id?: string }).ticket_id ?? '';
}

function sendHtml(reply: FastifyReply, status: number, body: string, frameAncestors: readonly string[]): FastifyReply {
  return reply.code(status).headers(hostedSecurityHeaders(frameAncestors)).type('text/html; charset=utf-8').send(body);
}

/** The ticket of this URL, if its screen can be shown here and now. */
async function openTicket(ctx: ServiceContext, req: FastifyRequest): Promise<Opened | Refusal> {
  const ticket = await findTicket(ctx.db, ticketIdOf(req));
  // Another host (another environment, or a name the ticket was not issued on) is "not found".
  if (!ticket || !isTicketHost(ticket, req)) return { refused: 404, frameAncestors: [] };
  const frameAncestors = await frameAncestorsOf(ctx.db, ticket.merchant_id, ticket.environment);
  const now = await ctx.clock.now(ctx.db, rowScope(ticket));
  if (!isUsable(ticket, now)) return { refused: 410, frameAncestors };
  const member = await ctx.resolveMember(ctx.db, ticket.merchant_id, ticket.environment, ticket.member_id);
  if (!member || member.status !== 'active') return { refused: 410, frameAncestors };
  return { ticket, now, frameAncestors };
}

function formFrame(key: Buffer, ticket: Ticket, cookie: string): FormFrame {
  return { action: `/hosted/${ticket.id}`, csrfToken: csrfToken(key, ticket.id, cookie) };
}

export function registerHostedPages(app: AppInstance, ctx: ServiceContext, screens: ScreenRegistry): void {
  const key = () => configuredKey(ctx.config, 'hosted-screens/csrf/v1');

  // Forms: files through @fastify/multipart (registered in this scope only, with its limits),
  // the rest URL-encoded. JSON bodies are not read here.
  void app.register(multipart, { limits: multipartLimits, throwFileSizeLimit: false });
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: urlencodedBodyMaxBytes },
    (_req, body, done) => {
      try {
        done(null, parseUrlencoded(body as string));
      } catch (err) {
        done(err as Error);
      }
    },
  );

  // Refusals are pages too, with the same headers; nothing about the cause is shown.
  app.setErrorHandler((err: any, req, reply) => {
    const clientFault =
      err instanceof FormBodyError ||
      err instanceof ApiError ||
      err?.code === 'FST_ERR_CTP_BODY_TOO_LARGE' ||
      err?.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' ||
      (typeof err?.statusCode === 'number' && err.statusCode >= 400 && err.statusCode < 500);
    if (!clientFault) req.log.error({ err }, 'hosted page failed');
    void sendHtml(reply, clientFault ? 400 : 500, unavailablePage(clientFault ? 400 : 500), []);
  });
  // Whatever else answers in this scope gets the headers too.
  app.addHook('onSend', async (req, reply, payload) => {
    if (!reply.hasHeader('content-security-policy')) void reply.headers(hostedSecurityHeaders([]));
    // Over HTTPS (as the connection or a trusted proxy says), browsers keep to it for a year.
    if (req.protocol === 'https') void reply.header('strict-transport-security', 'max-age=31536000');
    return payload;
  });

  /** The merchant's branding: its display name (else the name the operator registered), its logo and accent when set.
   * */
  const merchantShell = async (merchantId: string): Promise<MerchantShell | undefined> => {
    const b = await readBranding(ctx.db, merchantId);
    if (!b) return undefined;
    return {
      name: b.name,
      // Versioned URLs: a new logo or colour is a new address, so a cached old one is never shown.
      logoUrl: b.logo ? `${logoPath(merchantId)}?v=${b.logo.etag}` : undefined,
      accentUrl: b.accent ? `${accentPath(merchantId)}?v=${b.version}` : undefined,
    };
  };

  // The branding assets: public (a logo and a colour are shown to anyone holding a link), our
  // own origin (the CSP allows no other), with the sniffed type and nosniff.
  const assetHeaders = (etag: string) => ({
    ...hostedSecurityHeaders([]),
    'cache-control': 'public, max-age=300',
    etag: `"${etag}"`,
  });
  const notModified = (req: FastifyRequest, etag: string) =>
    (req.headers['if-none-match'] ?? '').split(',').some((t) => t.trim().replace(/^W\//, '') === `"${etag}"`);
  const merchantIdOf = (req: FastifyRequest) => (req.params as { merchant_id?: string }).merchant_id ?? '';

  app.get('/hosted/branding/:merchant_id/logo', { config: access, schema: hidden }, async (req, reply) => {
    const logo = await readLogo(ctx.db, merchantIdOf(req));
    if (!logo)
      return reply.code(404).headers(hostedSecurityHeaders([])).type('text/plain; charset=utf-8').send('not found');
    if (notModified(req, logo.etag)) return reply.code(304).headers(assetHeaders(logo.etag)).send();
    return reply.headers(assetHeaders(logo.etag)).type(logo.type).send(logo.bytes);
  });

  app.get('/hosted/branding/:merchant_id/accent.css', { config: access, schema: hidden }, async (req, reply) => {
    const b = await readBranding(ctx.db, merchantIdOf(req));
    if (!b?.accent)
      return reply.code(404).headers(hostedSecurityHeaders([])).type('text/plain; charset=utf-8').send('not found');
    const css = accentStylesheet(b.accent);
    const etag = b.accent.slice(1);
    if (notModified(req, etag)) return reply.code(304).headers(assetHeaders(etag)).send();
    return reply.headers(assetHeaders(etag)).type('text/css; charset=utf-8').send(css);
  });

  app.get(stylesheetPath, { config: access, schema: hidden }, async (_req, reply) =>
    reply.headers(hostedSecurityHeaders([])).type('text/css; charset=utf-8').send(stylesheet),
  );

  app.get('/hosted/:ticket_id', { config: access, schema: hidden }, async (req, reply) => {
    const opened = await openTicket(ctx, req);
    if ('refused' in opened)
      return sendHtml(reply, opened.refused, unavailablePage(opened.refused), opened.frameAncestors);
    const { ticket, now, frameAncestors } = opened;
    let cookie = cookieFrom(req.headers.cookie, csrfCookieName);
    if (!isCsrfCookieValue(cookie)) {
      cookie = newCsrfCookieValue();
      void reply.header(
        'set-cookie',
        csrfSetCookie(cookie, { secure: req.protocol === 'https', embeddable: frameAncestors.length > 0 }),
      );
    }
    const state: ScreenState = { form: formFrame(key(), ticket, cookie), values: {}, errors: [], now };
    const page = await screens.get(ticket.purpose).render(ctx, ticket, state);
    return sendHtml(
      reply,
      200,
      renderPage({ title: page.title, body: page.body, merchant: await merchantShell(ticket.merchant_id) }),
      frameAncestors,
    );
  });

  app.post('/hosted/:ticket_id', { config: access, schema: hidden }, async (req, reply) => {
    const opened = await openTicket(ctx, req);
    if ('refused' in opened)
      return sendHtml(reply, opened.refused, unavailablePage(opened.refused), opened.frameAncestors);
    const { ticket, frameAncestors } = opened;
    const body = await readFormBody(req);
    const cookie = cookieFrom(req.headers.cookie, csrfCookieName);
    if (!verifyCsrf(key(), ticket.id, cookie, body.fields[csrfFieldName])) {
      return sendHtml(reply, 403, unavailablePage(403, `/hosted/${ticket.id}`), frameAncestors);
    }
    const { [csrfFieldName]: _token, ...fields } = body.fields;
    const screen = screens.get(ticket.purpose);
    // Files reach only the screens that ask for them.
    if (body.files.length > 0 && !screen.acceptsFiles)
      return sendHtml(reply, 400, unavailablePage(400, `/hosted/${ticket.id}`), frameAncestors);
    const scope = rowScope(ticket);
    const prepared = screen.prepare ? await screen.prepare(ctx, ticket) : undefined;
    const outcome = await ctx.db.transaction().execute(async (trx) => {
      const locked = await findTicket(trx, ticket.id, true);
      const now = await ctx.clock.now(trx, scope);
      if (!locked || !isUsable(locked, now)) return undefined;
      return { now, result: await screen.submit(ctx, trx, locked, fields, body.files, now, prepared) };
    });
    if (!outcome) return sendHtml(reply, 410, unavailablePage(410), frameAncestors);
    const { result, now } = outcome;
    if (result.kind === 'done')
      return sendHtml(
        reply,
        200,
        renderPage({
          title: result.page.title,
          body: result.page.body,
          merchant: await merchantShell(ticket.merchant_id),
        }),
        frameAncestors,
      );
    // Refused: the same page with what was entered and the errors; the ticket is re-read (a
    // refusal may have changed it, e.g. a counted wrong code) and must still be open.
    const current = await findTicket(ctx.db, ticket.id);
    if (!current || !isUsable(current, now)) return sendHtml(reply, 410, unavailablePage(410), frameAncestors);
    const state: ScreenState = {
      form: formFrame(key(), current, cookie!),
      values: result.values,
      errors: result.errors,
      now,
    };
    const page = await screen.render(ctx, current, state);
    return sendHtml(
      reply,
      400,
      renderPage({
        title: page.title,
        body: page.body,
        errors: result.errors,
        merchant: await merchantShell(ticket.merchant_id),
      }),
      frameAncestors,
    );
  });
}
