/**
 * The console's sandbox-only pages (the sandbox tools, the test helpers): in production they do
 * not exist (404), and a change needs a role with `sandbox.write` (checked on the server).
 */
import type { AppInstance } from '../platform/http/app-instance.js';
import type { ServiceContext } from '../service-context.js';
import { ApiError } from '../platform/errors.js';
import { type PageRequest } from './http.js';
import { getPage, postChange, type PageHandler } from './guards.js';

function requireSandbox(page: PageRequest): void {
  if (page.environment !== 'sandbox') throw new ApiError('not_found');
}

/** Registers a GET page of the sandbox only. */
export function getSandboxPage(app: AppInstance, ctx: ServiceContext, path: string, handler: PageHandler): void {
  getPage(app, ctx, path, async (req, reply, page) => {
    requireSandbox(page);
    return handler(req, reply, page);
  });
}

/** Registers a change in the sandbox only, by a role that may use the sandbox tools. */
export function postSandboxChange(app: AppInstance, ctx: ServiceContext, path: string, handler: PageHandler): void {
  postChange(app, ctx, path, 'sandbox.write', async (req, reply, page) => {
    requireSandbox(page);
    return handler(req, reply, page);
  });
}
