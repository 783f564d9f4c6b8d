import { createHmac, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Transaction } from 'kysely';
import type { Database, Environment } from '../db/schema.js';
import type { ServiceContext } from '../service-context.js';
import { ApiError } from '../platform/errors.js';
import { configuredKey } from '../platform/auth/keys.js';
import {
  cookieFrom,
  csrfToken,
  isCsrfCookieValue,
  newCsrfCookieValue,
  verifyCsrf,
} from '../modules/hosted-screens/index.js';
import { resumeSession } from './sign-in.js';
import type { LoginClient } from './throttle.js';
import { deviceCookieName, deviceCookieSeconds, deviceIdFor, newDeviceValue } from './device.js';
import type { ConsoleSession } from './rules.js';
import { formOf, one, type FormFields } from './form.js';

/**
 * The console's HTTP plumbing: cookies, the CSRF check, the session of a request, the security
 * headers, form bodies. Every page handler goes through `withSession` (GET) or `withChange`
 * (POST) of guards.ts, so none can forget a check.
 *
 * CSRF: the signed double submit of the hosted screens (hosted-screens/csrf.ts), keyed to the
 * session cookie: every form carries HMAC(key, session cookie). Another site can make the browser
 * send the cookie (not under SameSite=Strict, but older browsers) yet can read neither it nor the
 * page, so it cannot produce the field. The sign-in form, before any session, uses a cookie of its
 * own the same way (login CSRF).
 */

export const sessionCookieName = 'mwa_console_session';
export const signInCookieName = 'mwa_console_signin';
export const csrfField = 'csrf_token';
const csrfPurpose = { session: 'console/session', signIn: 'console/sign-in' } as const;

export const consoleBase = '/console';

/** CSP of every console response: our stylesheet only, no script, forms only to ourselves, no framing. */
export const consoleSecurityHeaders: Record<string, string> = {
  'cache-control': 'no-store',
  'content-security-policy':
    "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; base-uri 'none'; " +
    "frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
};

export function sendHtml(reply: FastifyReply, status: number, body: string): FastifyReply {
  return reply.code(status).headers(consoleSecurityHeaders).type('text/html; charset=utf-8').send(body);
}

/** 303: the browser follows with a GET (Post/Redirect/Get). */
export function redirect(reply: FastifyReply, location: string): FastifyReply {
  return reply.code(303).headers(consoleSecurityHeaders).header('location', location).send();
}

function cookie(name: string, value: string, req: FastifyRequest, maxAgeSeconds?: number): string {
  const parts = [`${name}=${value}`, `Path=${consoleBase}`, 'HttpOnly', 'SameSite=Strict'];
  if (maxAgeSeconds !== undefined) parts.push(`Max-Age=${maxAgeSeconds}`);
  if (req.protocol === 'https') parts.push('Secure');
  return parts.join('; ');
}

/** The session cookie: no Max-Age (gone with the browser); the server enforces both timeouts. */
export const sessionSetCookie = (token: string, req: FastifyRequest) => cookie(sessionCookieName, token, req);
export const sessionClearCookie = (req: FastifyRequest) => cookie(sessionCookieName, '', req, 0);

const key = (ctx: ServiceContext) => configuredKey(ctx.config, 'console/csrf/v1');

export const sessionCsrf = (ctx: ServiceContext, req: FastifyRequest) =>
  csrfToken(key(ctx), csrfPurpose.session, cookieFrom(req.headers.cookie, sessionCookieName) ?? '');

/** The sign-in form's CSRF token, setting its cookie when the browser has none. */
export function signInCsrf(ctx: ServiceContext, req: FastifyRequest, reply: FastifyReply): string {
  let value = cookieFrom(req.headers.cookie, signInCookieName);
  if (!isCsrfCookieValue(value)) {
    value = newCsrfCookieValue();
    void reply.header('set-cookie', cookie(signInCookieName, value, req, 3600));
  }
  return csrfToken(key(ctx), csrfPurpose.signIn, value);
}

/** Whether a change's form carries the CSRF field of the session cookie it came with. */
export function sessionCsrfValid(ctx: ServiceContext, req: FastifyRequest): boolean {
  const session = cookieFrom(req.headers.cookie, sessionCookieName);
  return verifyCsrf(key(ctx), csrfPurpose.session, session, one(formOf(req), csrfField));
}

export function signInCsrfValid(ctx: ServiceContext, req: FastifyRequest, form: FormFields): boolean {
  return verifyCsrf(
    key(ctx),
    csrfPurpose.signIn,
    cookieFrom(req.headers.cookie, signInCookieName),
    one(form, csrfField),
  );
}

const deviceKey = (ctx: ServiceContext) => configuredKey(ctx.config, 'console/device/v1');

/** The request as the sign-in throttle sees it: its address, and its device cookie (device.ts). */
export function loginClient(ctx: ServiceContext, req: FastifyRequest): LoginClient {
  const value = cookieFrom(req.headers.cookie, deviceCookieName);
  return { ip: req.ip, deviceFor: (email) => deviceIdFor(deviceKey(ctx), email, value) };
}

/**
 * After a complete sign-in: the browser becomes known to the account (a new device cookie), unless
 * it is already; then no header (undefined), so its failures keep counting under the same id.
 */
export function deviceSetCookie(ctx: ServiceContext, req: FastifyRequest, email: string): string | undefined {
  if (loginClient(ctx, req).deviceFor(email) !== undefined) return undefined;
  return cookie(deviceCookieName, newDeviceValue(deviceKey(ctx), email), req, deviceCookieSeconds);
}

// Sessions --------------------------------------------------------------------------------------

export interface PageRequest {
  session: ConsoleSession;
  environment: Environment;
  /** The CSRF field every form of the page carries. */
  csrf: string;
  /** Real time of this request. */
  now: Date;
}

/** The merchant and environment a page acts for: the scope of the areas' reads and writes. */
export const callerOf = (page: PageRequest) => ({ merchantId: page.session.merchantId, environment: page.environment });
/** The list cursor of a page's query string (the next-page link's). */
export const cursorOf = (req: FastifyRequest) => (req.query as { cursor?: string }).cursor;

export function environmentParam(req: FastifyRequest): Environment | undefined {
  const env = (req.params as { env?: string }).env;
  return env === 'sandbox' || env === 'production' ? env : undefined;
}

const limits = (ctx: ServiceContext) => ({
  idleSeconds: ctx.config.consoleSessionIdleSeconds,
  maxSeconds: ctx.config.consoleSessionMaxSeconds,
});

/** The request's session, or the redirect to sign in (with why, when a session just ended). */
export async function sessionOf(
  ctx: ServiceContext,
  req: FastifyRequest,
  reply: FastifyReply,
): Promise<{ session: ConsoleSession; now: Date } | undefined> {
  const now = ctx.clock.real();
  const found = await resumeSession(ctx.db, cookieFrom(req.headers.cookie, sessionCookieName), now, limits(ctx));
  if (found === undefined || found === 'ended') {
    void reply.header('set-cookie', sessionClearCookie(req));
    void redirect(reply, `${consoleBase}/sign-in${found === 'ended' ? '?ended=1' : ''}`);
    return undefined;
  }
  return { session: found, now };
}

/**
 * Runs a change in one transaction (the service's effect and its audit line together). A refusal
 * the service raises (an ApiError, or a ledger error mapped to one) comes back as the text to
 * show; anything else is a fault and propagates.
 */
export async function attempt<T>(
  ctx: ServiceContext,
  effect: (trx: Transaction<Database>) => Promise<T>,
): Promise<{ ok: true; value: T } | { ok: false; problem: string }> {
  try {
    return { ok: true, value: await ctx.db.transaction().execute(effect) };
  } catch (err) {
    const api = err instanceof ApiError ? err : ctx.mapDomainError(err);
    if (!api) throw err;
    const fields = (api.extras as { fields?: { key: string; reason: string }[] }).fields;
    return {
      ok: false,
      problem: fields?.length
        ? `${api.message} (${fields.map((f) => `${f.key}: ${f.reason.replace(/_/g, ' ')}`).join(', ')})`
        : api.message,
    };
  }
}

/** `attempt` of an area's write made as the page's caller, at its clock's time (the sandbox clock in the sandbox). */
export function attemptAsCaller<T>(
  ctx: ServiceContext,
  page: PageRequest,
  effect: (trx: Transaction<Database>, caller: ReturnType<typeof callerOf>, now: Date) => Promise<T>,
) {
  return attempt(ctx, async (trx) => {
    const caller = callerOf(page);
    return effect(trx, caller, await ctx.clock.now(trx, caller));
  });
}

// The step between password and second factor -----------------------------------------------------

export const twoStepCookieName = 'mwa_console_two_step';
/** The password was right this long ago at most when the code is sent. */
export const twoStepSeconds = 300;

export const totpKey = (ctx: ServiceContext) => configuredKey(ctx.config, 'console/totp/v1');

function twoStepMac(ctx: ServiceContext, userId: string, generation: string, expires: number): string {
  return createHmac('sha256', key(ctx)).update(`two-step\n${userId}\n${generation}\n${expires}`).digest('base64url');
}

/**
 * A signed, short-lived cookie naming the user whose password was right: no session yet. It
 * carries the user's count of completed sign-ins when it was made (`generation`): the sign-in it
 * leads to (or any other) spends it.
 */
export function twoStepSetCookie(
  ctx: ServiceContext,
  req: FastifyRequest,
  userId: string,
  generation: string,
  now: Date,
): string {
  const expires = Math.floor(now.getTime() / 1000) + twoStepSeconds;
  return cookie(
    twoStepCookieName,
    `${userId}.${generation}.${expires}.${twoStepMac(ctx, userId, generation, expires)}`,
    req,
    twoStepSeconds,
  );
}

export const twoStepClearCookie = (req: FastifyRequest) => cookie(twoStepCookieName, '', req, 0);

/** The user of a valid two-step cookie, and the generation it was made at (checked against the user's when the code
 * comes). */
export function twoStepUser(
  ctx: ServiceContext,
  req: FastifyRequest,
  now: Date,
): { userId: string; generation: string } | undefined {
  const value = cookieFrom(req.headers.cookie, twoStepCookieName) ?? '';
  const m = /^(cus_[0-9a-f-]{36})\.([0-9]{1,19})\.([0-9]{1,12})\.([A-Za-z0-9_-]{43})$/.exec(value);
  if (!m) return undefined;
  const expires = Number(m[3]);
  if (expires * 1000 <= now.getTime()) return undefined;
  const expected = Buffer.from(twoStepMac(ctx, m[1]!, m[2]!, expires));
  const given = Buffer.from(m[4]!);
  return expected.length === given.length && timingSafeEqual(expected, given)
    ? { userId: m[1]!, generation: m[2]! }
    : undefined;
}

/** The session token the browser still holds, if any: a new sign-in ends that session. */
export const presentedSession = (req: FastifyRequest): string | undefined =>
  cookieFrom(req.headers.cookie, sessionCookieName);
