/**
 * Every console page handler goes through one of these, so none can forget a check: withSession
 * (a GET page: signed in, the environment of its URL) or withChange (a POST: signed in, the CSRF
 * field matching the session cookie, the user's role allowed to make the change), whose refusals
 * all answer the same page (refusedPage).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppInstance } from '../platform/http/app-instance.js';
import type { ServiceContext } from '../service-context.js';
import { ApiError } from '../platform/errors.js';
import { html } from '../modules/hosted-screens/index.js';
import { environmentParam, sessionCsrf, sessionCsrfValid, sessionOf, type PageRequest } from './http.js';

import { can, type Permission } from './rules.js';
import { envPath, sendPage } from './views.js';

/** The options of every console route: public to the API's pipeline (the console checks its own
 * session, here) and hidden from the OpenAPI document. */
export const pageRoute = { config: { access: { scope: 'public' as const } }, schema: { hide: true } };

export type PageHandler = (req: FastifyRequest, reply: FastifyReply, page: PageRequest) => Promise<unknown>;

/** A page its GET draws, and its POSTs draw again with what they say (a problem or a notice) and their status. */
export type RedrawnPage = (
  ctx: ServiceContext,
  req: FastifyRequest,
  reply: FastifyReply,
  page: PageRequest,
  extra?: { problem?: string; notice?: string },
  status?: number,
) => Promise<unknown>;

/** A GET page: signed in, the environment of its URL. */
export function withSession(ctx: ServiceContext, handler: PageHandler) {
  return async (req: FastifyRequest, reply: FastifyReply) => {
    const environment = environmentParam(req);
    if (!environment) throw new ApiError('not_found');
    const s = await sessionOf(ctx, req, reply);
    if (!s) return reply;
    return handler(req, reply, { ...s, environment, csrf: sessionCsrf(ctx, req) });
  };
}

export type Refusal = 'csrf' | 'role';

/** The answer to a POST refused for its CSRF field or the user's role: a page, 403. */
export function refusedPage(page: PageRequest, reply: FastifyReply, why: Refusal) {
  const text =
    why === 'role'
      ? `Your role (${page.session.role}) cannot make this change. Ask an owner of the account.`
      : 'The form was open too long or did not come from this console. Open the page again and retry.';
  return sendPage(
    reply,
    page,
    {
      title: 'Not allowed',
      section: 'none',
      problem: text,
      body: html`<p><a href="${envPath(page.environment)}">Back to the console</a></p>`,
    },
    403,
  );
}

/**
 * A POST that changes something: signed in, the CSRF field matching the session cookie, and the
 * user's role allowed to make this change (checked here, on the server, whatever the page showed).
 */
export function withChange(ctx: ServiceContext, permission: Permission | 'session', handler: PageHandler) {
  return async (req: FastifyRequest, reply: FastifyReply) => {
    // Routes without an environment in the path (sign-out) act on none; a path naming another one is not found.
    const named = (req.params as { env?: string }).env;
    const environment = environmentParam(req);
    if (named !== undefined && !environment) throw new ApiError('not_found');
    const s = await sessionOf(ctx, req, reply);
    if (!s) return reply;
    const page = { ...s, environment: environment ?? 'sandbox', csrf: sessionCsrf(ctx, req) };
    if (!sessionCsrfValid(ctx, req)) return refusedPage(page, reply, 'csrf');
    if (permission !== 'session' && !can(s.session.role, permission)) return refusedPage(page, reply, 'role');
    return handler(req, reply, page);
  };
}

/** Registers a GET page at `path`, through withSession. */
export function getPage(app: AppInstance, ctx: ServiceContext, path: string, handler: PageHandler): void {
  app.get(path, pageRoute, withSession(ctx, handler));
}

/** Registers a POST change at `path`, through withChange: the user's role needs `permission`. */
export function postChange(
  app: AppInstance,
  ctx: ServiceContext,
  path: string,
  permission: Permission | 'session',
  handler: PageHandler,
): void {
  app.post(path, pageRoute, withChange(ctx, permission, handler));
}
