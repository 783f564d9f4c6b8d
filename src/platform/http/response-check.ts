// Over 300 lines: one check (schema compiler, walk of a body against the closed schema, report).
import { appendFileSync } from 'node:fs';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifyReply, FastifyRequest, FastifySerializerCompiler } from 'fastify';
import type { AppInstance } from './app-instance.js';
import type { StrictResponses } from '../config/config.js';
import { ApiError, errorStatus, errorType, isErrorCode, type ErrorCode } from '../errors.js';
import { accessErrorCodes, errorSchema, operatorErrorCodes } from '../openapi/openapi-access.js';
import type { RouteAccess } from '../routes/route-access.js';
import { serializerCompiler } from './validation.js';

/**
 * The strict response check (`MWA_STRICT_RESPONSES`, docs/testing.md): every body a route answers
 * through its response schema is checked against that schema before it is serialized. The
 * serializer (fast-json-stringify) does not check: it drops a property the schema does not declare
 * (a field the merchant never sees), writes a number where a string is declared, and writes `""`
 * for a null where a string is declared. So a schema that lags behind the code, or code that lags
 * behind the schema (a documented field never produced, a null where the document promises a
 * value), shows nowhere. The check reads every object of a schema as closed (no property beyond
 * those declared, unless the schema says `additionalProperties` or `patternProperties`), and
 * takes the data as JSON would: a Date as its ISO text, a property whose value is undefined as
 * absent. The tests turn it on for every service they start (support/service.ts); a service never
 * runs with it.
 */

export type { StrictResponses };

export interface ResponseViolation {
  method: string;
  url: string;
  status: number;
  /** JSON pointer of the property in the body. */
  path: string;
  message: string;
}

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
const checkOptions = { strict: false, coerceTypes: false, useDefaults: false, removeAdditional: false } as const;
// The first failure is enough to know; every failure is looked for only then (a larger validator).
const firstAjv = addFormats(new Ajv({ ...checkOptions, allErrors: false }));
const everyAjv = addFormats(new Ajv({ ...checkOptions, allErrors: true }));

type Json = Record<string, unknown>;

const subschemaLists = ['anyOf', 'oneOf', 'prefixItems'] as const;
const subschemaMaps = ['properties', 'patternProperties', '$defs', 'definitions'] as const;
const subschemaSingles = ['items', 'additionalProperties', 'not', 'if', 'then', 'else', 'contains'] as const;

/**
 * A copy of `schema` whose objects admit only the properties they declare. `allOf` branches are
 * left open (each branch alone would refuse the other's properties).
 */
export function closedSchema(schema: unknown, inAllOf = false): unknown {
  if (Array.isArray(schema)) return schema.map((s) => closedSchema(s, inAllOf));
  if (schema === null || typeof schema !== 'object') return schema;
  const source = schema as Json;
  const copy: Json = { ...source };
  for (const key of subschemaLists)
    if (Array.isArray(source[key])) copy[key] = (source[key] as unknown[]).map((s) => closedSchema(s));
  if (Array.isArray(source.allOf)) copy.allOf = (source.allOf as unknown[]).map((s) => closedSchema(s, true));
  for (const key of subschemaMaps) {
    const map = source[key];
    if (map && typeof map === 'object')
      copy[key] = Object.fromEntries(Object.entries(map).map(([k, s]) => [k, closedSchema(s)]));
  }
  for (const key of subschemaSingles)
    if (source[key] && typeof source[key] === 'object') copy[key] = closedSchema(source[key]);
  const isObject = source.type === 'object' || source.properties !== undefined;
  if (isObject && !inAllOf && source.additionalProperties === undefined && source.patternProperties === undefined)
    copy.additionalProperties = false;
  return copy;
}

/** The data as its JSON text would carry it: Dates as ISO text, undefined properties absent. Bigints stay (the check
 * names them). */
export function asJsonData(value: unknown): unknown {
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? value : value.toISOString();
  if (Array.isArray(value)) return value.map(asJsonData);
  if (value === null || typeof value !== 'object') return value;
  const out: Json = {};
  for (const [k, v] of Object.entries(value)) if (v !== undefined) out[k] = asJsonData(v);
  return out;
}

const validators = new Map<string, { first: ValidateFunction; every?: ValidateFunction; closed: object }>();

function strictValidators(schema: unknown) {
  const key = JSON.stringify(schema);
  let found = validators.get(key);
  if (!found) {
    const closed = closedSchema(schema) as object;
    found = { first: firstAjv.compile(closed), closed };
    validators.set(key, found);
  }
  return found;
}

function describe(error: ErrorObject, data: unknown): { path: string; message: string } {
  const params = error.params as Json;
  if (error.keyword === 'additionalProperties') {
    return {
      path: `${error.instancePath}/${String(params.additionalProperty)}`,
      message: 'present in the data, not declared by the schema (the serializer drops it)',
    };
  }
  if (error.keyword === 'required') {
    return {
      path: `${error.instancePath}/${String(params.missingProperty)}`,
      message: 'declared required by the schema, missing from the data',
    };
  }
  const value = error.instancePath
    .split('/')
    .slice(1)
    .reduce<unknown>((v, k) => (v as Json | undefined)?.[k.replace(/~1/g, '/').replace(/~0/g, '~')], data);
  const shown = typeof value === 'bigint' ? `${value}n (bigint)` : JSON.stringify(value);
  return { path: error.instancePath || '/', message: `${error.message ?? error.keyword}; got ${shown?.slice(0, 80)}` };
}

/** The violations of `data` against `schema` (a failed union lists each branch's too), each once. */
export function responseViolations(schema: unknown, data: unknown): Array<{ path: string; message: string }> {
  const found = strictValidators(schema);
  // Almost every body is plain JSON data already: checked as it is, with no copy.
  if (found.first(data)) return [];
  const json = asJsonData(data);
  if (found.first(json)) return [];
  const validate = (found.every ??= everyAjv.compile(found.closed));
  validate(json);
  const errors = validate.errors ?? [];
  const seen = new Set<string>();
  const violations: Array<{ path: string; message: string }> = [];
  for (const error of errors) {
    const { path, message } = describe(error, json);
    const key = `${path} ${message}`;
    if (!seen.has(key)) {
      seen.add(key);
      violations.push({ path, message });
    }
  }
  return violations;
}

/**
 * A serializer compiler that checks before it serializes (Fastify's, as `serializerCompiler`).
 * `report` gets every violation; in `fail` mode the answer then fails (a 500, as a serializer
 * error is), so that a test sees it.
 */
export function strictSerializerCompiler(
  mode: Exclude<StrictResponses, 'off'>,
  report: (v: ResponseViolation) => void,
): FastifySerializerCompiler<any> {
  return (route) => {
    const serialize = serializerCompiler(route) as (data: unknown) => string;
    const { method, url, httpStatus, schema } = route as {
      method: string;
      url: string;
      httpStatus: string;
      schema: unknown;
    };
    return (data: unknown) => {
      const violations = responseViolations(schema, data);
      for (const v of violations) report({ method, url, status: Number(httpStatus), ...v });
      if (mode === 'report')
        for (const path of presentPaths(data)) noteSeen(`${method} ${url} ${httpStatus} ${path}`, report);
      if (violations.length > 0 && mode === 'fail') {
        const first = violations[0]!;
        throw new Error(
          `response of ${method} ${url} (${httpStatus}) does not match its schema at ${first.path}: ${first.message}`,
        );
      }
      return serialize(data);
    };
  };
}

/** The error envelope as the OpenAPI document shows it (`Error`), closed: `error` is the same envelope again (429). */
const { additionalProperties: _open, ...envelope } = errorSchema;
const { error: _wrapped, ...envelopeFields } = envelope.properties;
const closedErrorSchema = {
  ...envelope,
  properties: { ...envelopeFields, error: { ...envelope, properties: envelopeFields } },
};

/**
 * What the serializer compiler cannot see, checked on every body sent as an object: an error
 * body (no route declares one; the document's `Error` envelope is the schema), and a success
 * body of a status the route's schema does not declare (sent by JSON.stringify, undocumented).
 * Routes hidden from the document (health, the documents themselves) are not checked. In `fail`
 * mode such an answer becomes a 500 `api_error`.
 */
export function installStrictResponseHook(
  app: AppInstance,
  mode: Exclude<StrictResponses, 'off'>,
  report: (v: ResponseViolation) => void,
): void {
  app.addHook(
    'preSerialization',
    (
      req: FastifyRequest,
      reply: FastifyReply,
      payload: unknown,
      done: (err: Error | null, payload?: unknown) => void,
    ) => {
      const schema = req.routeOptions?.schema as { hide?: boolean; response?: Record<string, unknown> } | undefined;
      const status = reply.statusCode;
      const method = req.method;
      const url = req.routeOptions?.url ?? '(no route)';
      let found: Array<{ path: string; message: string }> = [];
      if (status >= 400)
        found = [...responseViolations(closedErrorSchema, payload), ...codeViolations(req, status, payload)];
      else if (schema?.hide !== true && schema?.response?.[status] === undefined)
        found = [
          { path: '/', message: `status ${status} answered with a body the route's response schema does not declare` },
        ];
      for (const v of found) report({ method, url, status, ...v });
      if (found.length === 0 || mode !== 'fail' || status === 500) return done(null, payload);
      void reply.code(500);
      done(
        null,
        new ApiError('api_error', `strict response check: ${found[0]!.path}: ${found[0]!.message}`).body(req.id),
      );
    },
  );
}

type RouteSchemaParts = { body?: unknown; querystring?: unknown; params?: unknown; headers?: unknown; hide?: boolean };

/**
 * An error's code against the operation's document: a code of the catalogue, answered with its
 * own type and status, and listed for the operation (`x-error-codes`, from the route's access or
 * operator declaration). A 500 is always possible and not checked.
 */
function codeViolations(
  req: FastifyRequest,
  status: number,
  payload: unknown,
): Array<{ path: string; message: string }> {
  const code = (payload as { code?: unknown } | null)?.code;
  const type = (payload as { type?: unknown } | null)?.type;
  if (typeof code !== 'string' || !isErrorCode(code))
    return [{ path: '/code', message: `not a code of the error catalogue: ${String(code)}` }];
  if (errorStatus(code) !== status || errorType(code) !== type)
    return [
      {
        path: '/code',
        message: `${code} is ${errorType(code)} ${errorStatus(code)}; answered as ${String(type)} ${status}`,
      },
    ];
  if (status === 500) return [];
  const schema = (req.routeOptions?.schema ?? {}) as RouteSchemaParts;
  const config = req.routeOptions?.config as { access?: RouteAccess; operator?: { errors: ErrorCode[] } } | undefined;
  if (schema.hide === true) return [];
  const parts = {
    body: !!schema.body,
    querystring: !!schema.querystring,
    params: !!schema.params,
    headers: !!schema.headers,
  };
  const listed = config?.access
    ? accessErrorCodes(req.method, config.access, parts)
    : config?.operator
      ? operatorErrorCodes(config.operator)
      : undefined;
  if (listed === undefined || listed.includes(code)) return [];
  return [{ path: '/code', message: `${code} is not among the codes the document lists for this operation` }];
}

/**
 * The properties present in a body, array items as `[]`: in `report` mode each one is reported
 * the first time a process sees it on a route (message `seen`), so that an audit can list the
 * properties a schema declares and no answer of the suite carried.
 */
export function presentPaths(data: unknown): Set<string> {
  const out = new Set<string>();
  const walk = (value: unknown, at: string): void => {
    if (Array.isArray(value)) for (const item of value) walk(item, `${at}/[]`);
    else if (value !== null && typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) {
        out.add(`${at}/${k}`);
        walk(v, `${at}/${k}`);
      }
    }
  };
  walk(asJsonData(data), '');
  return out;
}

const seenPaths = new Set<string>();

function noteSeen(key: string, report: (v: ResponseViolation) => void): void {
  if (seenPaths.has(key)) return;
  seenPaths.add(key);
  const [method, url, status, path] = key.split(' ');
  report({ method: method!, url: url!, status: Number(status), path: path!, message: 'seen' });
}

/** Where violations go: appended as JSON lines to `file` (several processes may share it), or written to stderr. */
export function violationReporter(file: string | undefined): (v: ResponseViolation) => void {
  return (v) => {
    const line = `${JSON.stringify({ kind: v.message === 'seen' ? 'response-seen' : 'response-violation', ...v })}\n`;
    if (file) appendFileSync(file, line);
    else process.stderr.write(`strict response check: ${line}`);
  };
}
