import { Ajv, type Options } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

const base: Options = { allErrors: false, removeAdditional: true, useDefaults: true, strict: false };

// Bodies are JSON and validated as sent (a string is never a boolean); path, query and headers
// arrive as text and are coerced to the declared types.
const bodyAjv = addFormats(new Ajv({ ...base, coerceTypes: false }));
const textAjv = addFormats(new Ajv({ ...base, coerceTypes: 'array' }));

export const validatorCompiler: FastifySchemaCompiler<any> = ({ schema, httpPart }) =>
  (httpPart === 'body' ? bodyAjv : textAjv).compile(schema as object) as any;
