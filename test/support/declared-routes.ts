/**
 * The routes as the service declares them, for the tests that hold the OpenAPI documents and the
 * tenant isolation against what is actually registered.
 */
import assert from 'node:assert/strict';
import type { RouteOptions } from 'fastify';
import { buildPublicApp } from '../../src/platform/http/http-app.js';
import type { RouteAccess } from '../../src/platform/routes/route-access.js';
import { registerPublicRoutes } from '../../src/routes.js';
import type { RunningService } from '../../src/server.js';

type Json = Record<string, any>;

export interface PublicRoute {
  method: string;
  url: string;
  hidden: boolean;
  access: RouteAccess;
  schema: Json;
}

/**
 * Registers the public routes once more on a fresh app (never started) with an `onRoute` hook in
 * front, to see each route's method, url, schema and access as the service declares them.
 */
export async function registeredPublicRoutes(service: RunningService): Promise<PublicRoute[]> {
  const app = buildPublicApp({ ...service.ctx, logger: false });
  const seen: PublicRoute[] = [];
  app.addHook('onRoute', (route: RouteOptions) => {
    for (const method of [route.method].flat()) {
      if (method === 'HEAD') continue;
      const schema = (route.schema ?? {}) as Json;
      seen.push({ method, url: route.url, hidden: schema.hide === true, access: route.config!.access!, schema });
    }
  });
  await registerPublicRoutes(app, service.ctx);
  return seen;
}

/** A Fastify route url as an OpenAPI path: `/v1/x/:id` is `/v1/x/{id}`. */
export const openapiPath = (url: string) => url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

/** The operation a document has for a route. */
export function operationOf(doc: Json, route: { method: string; url: string }): Json {
  return doc.paths[openapiPath(route.url)][route.method.toLowerCase()];
}

/**
 * Checks that each route's operation carries the camelCase operationId the route declares, and
 * answers those ids (for the caller's uniqueness check over the whole document).
 */
export function declaredOperationIds(doc: Json, routes: Array<{ method: string; url: string; schema: Json }>) {
  const ids: string[] = [];
  for (const route of routes) {
    const op = operationOf(doc, route);
    const where = `${route.method} ${route.url}`;
    assert.equal(typeof route.schema.operationId, 'string', `${where} declares no operationId`);
    assert.equal(op.operationId, route.schema.operationId, where);
    assert.match(op.operationId, /^[a-z][a-zA-Z0-9]*$/, `${where}: not camelCase`);
    ids.push(op.operationId);
  }
  return ids;
}
