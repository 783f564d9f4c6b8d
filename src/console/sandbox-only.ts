/**
 * The console's sandbox-only pages (the sandbox tools, the test helpers): in production they do
 * not exist (404), and a change needs a role with `sandbox.write` (checked on the server).
 */
import type { ServiceContext } from '../service-context.js';
import { ApiError } from '../platform/errors.js';
import { type PageRequest } from './http.js';
import { withChange, withSession, type PageHandler } from './guards.js';

function requireSandbox(page: PageRequest): void {
  if (page.environment !== 'sandbox') throw new ApiError('not_found');
}

/** A GET page of the sandbox only. */
export function withSandboxSession(ctx: ServiceContext, handler: PageHandler) {
  return withSession(ctx, async (req, reply, page) => {
    requireSandbox(page);
    return handler(req, reply, page);
  });
}

/** A change in the sandbox only, by a role that may use the sandbox tools. */
export function withSandboxChange(ctx: ServiceContext, handler: PageHandler) {
  return withChange(ctx, 'sandbox.write', async (req, reply, page) => {
    requireSandbox(page);
    return handler(req, reply, page);
  });
}
