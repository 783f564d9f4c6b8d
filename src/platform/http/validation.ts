import { Ajv, type Options, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { createRequire } from 'node:module';
import type { FastifySchemaCompiler, FastifySerializerCompiler } from 'fastify';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

const base: Options = { allErrors: false, removeAdditional: true, useDefaults: true, strict: false };

// Bodies are JSON and validated as sent (a string is never a boolean); path, query and headers
// arrive as text and are coerced to the declared types.
const bodyAjv = parsableDateTimes(addFormats(new Ajv({ ...base, coerceTypes: false })));
const textAjv = parsableDateTimes(addFormats(new Ajv({ ...base, coerceTypes: 'array' })));

/** The first instant of year 1 (UTC): the earliest time the database reads from JavaScript. */
const earliestStorableMs = Date.parse('0001-01-01T00:00:00Z');

/**
 * `date-time` as RFC 3339 and also a time JavaScript can read: RFC 3339 allows a leap second
 * (`23:59:60Z`), which `new Date` reads as an invalid date, and a handler given one failed with a
 * 500. Refused at validation instead (400 `invalid_request`). So is a time before year 1 (year
 * `0000`, or `0001-01-01` with a positive offset): RFC 3339 and JavaScript read it, but the driver
 * sends it as year 0000, which PostgreSQL refuses ("date/time field value out of range"): a 500.
 */
function parsableDateTimes(ajv: Ajv): Ajv {
  const rfc3339 = ajv.formats['date-time'] as ((s: string) => boolean) | { validate: (s: string) => boolean };
  const shape = typeof rfc3339 === 'function' ? rfc3339 : rfc3339.validate;
  ajv.addFormat('date-time', {
    type: 'string',
    validate: (s: string) => shape(s) && Date.parse(s) >= earliestStorableMs,
  });
  return ajv;
}

/**
 * Compiled validators, one per schema (by content) and kind of part, for the whole process. A
 * service builds two apps whose routes share schemas, and a test process starts many services:
 * compiling every route's schemas again took ~0.4 s of CPU per service start. A validator depends
 * only on its schema and the Ajv instance's options, and keeps no state between calls.
 */
const compiledValidators = new Map<string, ValidateFunction>();

/** The compilations put off to a schema's first use (below), until they have run: one per schema and kind. */
const deferred = new Map<string, () => unknown>();

/**
 * Compiles every schema whose compilation was put off, now; throws the first that fails. A
 * schema that cannot compile would otherwise show only at its route's first request (a 500): the
 * tests call this after starting a service, so every route's schemas are compiled once there.
 */
export function compileDeferredSchemas(): number {
  const count = deferred.size;
  for (const compile of [...deferred.values()]) compile();
  return count;
}

export const validatorCompiler: FastifySchemaCompiler<any> = ({ schema, httpPart }) => {
  const body = httpPart === 'body';
  const key = `${body ? 'body' : 'text'} ${JSON.stringify(schema)}`;
  const compiled = () => {
    let validate = compiledValidators.get(key);
    if (!validate) {
      validate = (body ? bodyAjv : textAjv).compile(schema as object);
      compiledValidators.set(key, validate);
    }
    deferred.delete(key);
    return validate;
  };
  if (compiledValidators.has(key)) return compiled() as any;
  // Compiled at its first use, not when the route is registered: a process compiles only the
  // schemas of the routes it serves (a service process starts ~0.75 s of CPU sooner). What Fastify
  // reads from an Ajv function is the compiled one's: `schemaEnv` (then it passes the parent data,
  // so that a root value can be coerced) and `errors` after a call.
  deferred.set(key, compiled);
  const lazy = (data: unknown, dataCxt?: unknown) => compiled()(data, dataCxt as never);
  Object.defineProperty(lazy, 'schemaEnv', { get: () => compiled().schemaEnv });
  Object.defineProperty(lazy, 'errors', { get: () => compiled().errors });
  return lazy as any;
};

/**
 * Fastify's own response serializer compiler (fast-json-stringify, as Fastify sets it up when given
 * no options), with its compiled serializers kept per schema (by content) for the whole process, for
 * the same reason as the validators. Taken from Fastify's own dependency: it is what Fastify would
 * use, whatever version Fastify brings.
 */
const fastifyRequire = createRequire(import.meta.resolve('fastify'));
const buildFastifySerializer = (
  fastifyRequire('@fastify/fast-json-stringify-compiler') as () => (
    externalSchemas: unknown,
    options: unknown,
  ) => FastifySerializerCompiler<any>
)()({}, {});
const compiledSerializers = new Map<string, (data: unknown) => string>();

export const serializerCompiler: FastifySerializerCompiler<any> = (route) => {
  const key = JSON.stringify(route.schema);
  const compiled = () => {
    let serialize = compiledSerializers.get(key);
    if (!serialize) {
      serialize = buildFastifySerializer(route);
      compiledSerializers.set(key, serialize);
    }
    deferred.delete(`serializer ${key}`);
    return serialize;
  };
  // At its first use, as the validators.
  if (compiledSerializers.has(key)) return compiled();
  deferred.set(`serializer ${key}`, compiled);
  return (data: unknown) => compiled()(data);
};

// ---------------------------------------------------------------------------------------------
// Input every request passes before anything reads it (body parser and the first onRequest hook).

/**
 * Deepest nesting of arrays and objects a JSON body may have. The API's bodies are at most three
 * levels deep; 32 leaves room while keeping every walk over a body (hashing for idempotency,
 * validation, logging) far from the stack limit. Checked on the bytes, before JSON.parse.
 */
export const jsonDepthMax = 32;

/** Longest path parameter the router reads, in characters (every route's schema allows at most 200). */
export const pathParamLengthMax = 256;

/**
 * Whether the JSON text nests arrays and objects deeper than `max`. A linear scan that skips
 * string contents; it runs on any bytes (malformed JSON is JSON.parse's to refuse).
 */
export function jsonDepthExceeds(bytes: Uint8Array, max = jsonDepthMax): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    if (inString) {
      if (b === 0x5c)
        i++; // backslash: the next byte is escaped
      else if (b === 0x22) inString = false;
    } else if (b === 0x22) {
      inString = true;
    } else if (b === 0x7b || b === 0x5b) {
      if (++depth > max) return true;
    } else if (b === 0x7d || b === 0x5d) {
      depth--;
    }
  }
  return false;
}

// NUL (PostgreSQL text cannot hold it) or a UTF-16 surrogate without its pair (not a character:
// it cannot be stored as UTF-8 without being changed).
const unsafeText = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

// Any NUL or surrogate at all: a plain character class, much cheaper than the pairing rules
// above, and almost every string (every header of every request) has neither.
const nulOrSurrogate = /[\u0000\uD800-\uDFFF]/;

/** Whether a string can reach the database unchanged: no NUL and no unpaired surrogate. */
export function isSafeText(text: string): boolean {
  return !nulOrSurrogate.test(text) || !unsafeText.test(text);
}

const pointerToken = (key: string | number) => String(key).replace(/~/g, '~0').replace(/\//g, '~1');

/**
 * The JSON pointer of the first string (a value or a key) in `value` that is not safe text, or
 * undefined. Iterative, so any depth is safe; the body parser has bounded it anyway.
 */
export function findUnsafeText(value: unknown): string | undefined {
  const pending: Array<[unknown, string]> = [[value, '']];
  while (pending.length > 0) {
    const [item, pointer] = pending.pop()!;
    if (typeof item === 'string') {
      if (!isSafeText(item)) return pointer;
    } else if (Array.isArray(item)) {
      for (let i = item.length - 1; i >= 0; i--) pending.push([item[i], `${pointer}/${i}`]);
    } else if (item !== null && typeof item === 'object') {
      for (const [k, v] of Object.entries(item)) {
        const at = `${pointer}/${pointerToken(k)}`;
        if (!isSafeText(k)) return at;
        pending.push([v, at]);
      }
    }
  }
  return undefined;
}

/** Where a request's text fails `isSafeText`: `path parameter id`, `query parameter cursor`, `header x-on-behalf-of`.
 * */
export function findUnsafeRequestText(parts: {
  params?: unknown;
  query?: unknown;
  headers?: Record<string, string | string[] | undefined>;
}): string | undefined {
  // Runs on every request: plain loops, no entry arrays.
  return (
    unsafeIn(parts.params, 'path parameter') ??
    unsafeIn(parts.query, 'query parameter') ??
    unsafeIn(parts.headers, 'header')
  );
}

function unsafeIn(values: unknown, label: string): string | undefined {
  if (values === null || typeof values !== 'object') return undefined;
  const record = values as Record<string, unknown>;
  for (const name of Object.keys(record)) {
    const v = record[name];
    let safe = isSafeText(name);
    if (safe && typeof v === 'string') safe = isSafeText(v);
    else if (safe && Array.isArray(v)) safe = v.every((t) => typeof t !== 'string' || isSafeText(t));
    if (!safe) return `${label} ${isSafeText(name) ? name : JSON.stringify(name)}`;
  }
  return undefined;
}
