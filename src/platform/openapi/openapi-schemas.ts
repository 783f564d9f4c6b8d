/**
 * Named schemas of the OpenAPI documents (public and operator): a route schema names a schema by
 * giving it a `title` (`Type.Object({...}, { title: 'Member' })`, in the area's schemas or routes
 * file), and the document holds it once under `components.schemas.Member`, referenced (`$ref`)
 * wherever it is used, so a code generator makes one type per resource. A request body without a
 * title is named after its operation (`createMember` → `CreateMemberRequest`), a success body
 * without one likewise (`suspendMember` → `SuspendMemberResponse`). Ajv and the serializer read a
 * title as an annotation only, so the validation, the serialization and the strict response check
 * see the same schemas as before; only the document changes.
 */

type Json = Record<string, any>;

/** A title that names a component: PascalCase, as the resources of the reference are named. */
const componentName = /^[A-Z][A-Za-z0-9]*$/;

const operationMethods = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/** `createMember` → `CreateMember`. */
export function pascalCase(operationId: string): string {
  return operationId.charAt(0).toUpperCase() + operationId.slice(1);
}

export class SchemaNameConflict extends Error {}

/**
 * Replaces every named schema in the operations of `doc` (parameters, request bodies, responses)
 * by a reference to `components.schemas`, innermost first. Two different schemas given one name
 * throw `SchemaNameConflict`: one of them must be renamed in its route schema file.
 */
export function hoistNamedSchemas(doc: Json): Json {
  const components: Json = { ...(doc.components?.schemas ?? {}) };
  const given = new Set(Object.keys(components));
  // @fastify/swagger moves the examples of a whole body to its media object: a schema is the
  // same schema with or without them, and the component keeps them.
  const shape = ({ examples: _examples, example: _example, ...rest }: Json): string => JSON.stringify(rest);
  const register = (name: string, schema: Json): Json => {
    const existing = components[name];
    if (existing !== undefined && shape(existing) !== shape(schema)) {
      throw new SchemaNameConflict(
        `OpenAPI: two different schemas are ` +
          `named ${name}${given.has(name) ? ' (a name the document gives itself)' : ''}; rename one in its ` +
          `route schema file`,
      );
    }
    components[name] = { ...existing, ...schema };
    return { $ref: `#/components/schemas/${name}` };
  };
  const hoist = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(hoist);
    if (value === null || typeof value !== 'object') return value;
    const source = value as Json;
    if (typeof source.$ref === 'string') return source;
    const out: Json = {};
    for (const [key, child] of Object.entries(source)) {
      // Values, not schemas: left as they are.
      out[key] =
        key === 'enum' || key === 'const' || key === 'default' || key === 'example' || key === 'examples'
          ? child
          : hoist(child);
    }
    return typeof out.title === 'string' && componentName.test(out.title) ? register(out.title, out) : out;
  };
  /** A body schema: its named parts hoisted; unnamed itself, it takes `fallback` as its name. */
  const named = (schema: Json | undefined, fallback: string | undefined): Json | undefined => {
    if (!schema) return schema;
    const hoisted = hoist(schema) as Json;
    if (hoisted.$ref || !fallback) return hoisted;
    return register(fallback, { title: fallback, ...hoisted });
  };
  const mapContent = (content: Json | undefined, fallback: string | undefined): Json | undefined =>
    content &&
    Object.fromEntries(
      Object.entries<Json>(content).map(([type, media]) => [
        type,
        media.schema ? { ...media, schema: named(media.schema, fallback) } : media,
      ]),
    );

  for (const item of Object.values<Json>(doc.paths ?? {})) {
    for (const method of operationMethods) {
      const op = item[method];
      if (!op) continue;
      const base = typeof op.operationId === 'string' ? pascalCase(op.operationId) : undefined;
      if (op.parameters)
        op.parameters = op.parameters.map((p: Json) => (p.schema ? { ...p, schema: hoist(p.schema) } : p));
      if (op.requestBody?.content)
        op.requestBody = { ...op.requestBody, content: mapContent(op.requestBody.content, base && `${base}Request`) };
      if (op.responses) {
        const successes = Object.keys(op.responses).filter((s) => /^2\d\d$/.test(s));
        op.responses = Object.fromEntries(
          Object.entries<Json>(op.responses).map(([status, response]) => {
            // One success body takes the operation's name; several (rare) take their status too.
            const fallback =
              !base || !successes.includes(status)
                ? undefined
                : successes.length === 1
                  ? `${base}Response`
                  : `${base}Response${status}`;
            return [
              status,
              response.content ? { ...response, content: mapContent(response.content, fallback) } : response,
            ];
          }),
        );
      }
    }
  }
  doc.components = {
    ...doc.components,
    schemas: Object.fromEntries(Object.entries(components).sort(([a], [b]) => a.localeCompare(b))),
  };
  return doc;
}
