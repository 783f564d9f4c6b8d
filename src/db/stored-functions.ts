import { sql, type Kysely } from 'kysely';
import { functionFiles, type FunctionFile } from './function-files.js';

/**
 * The stored functions (docs/stored-functions.md): src/db/functions/*.sql, one function per file,
 * are their only source. Each file is SQL comments (what the function does, why, its history)
 * followed by its definition exactly as PostgreSQL prints it (`pg_get_functiondef`: `CREATE OR
 * REPLACE FUNCTION public.<name>(...)`, its attributes such as `SET plan_cache_mode`, the body).
 * `migrateToLatest` applies them after the migrations, on every migrate.
 */
export interface StoredFunction extends FunctionFile {
  /**
   * The definition: the file from its `CREATE OR REPLACE` line on, as `pg_get_functiondef` prints it
   * (a wrapped header joined back).
   */
  definition: string;
  /** Its first line (`CREATE OR REPLACE FUNCTION public.name(arguments)`), which names it with its signature. */
  signature: string;
}

const definitionStart = /^CREATE OR REPLACE (FUNCTION|PROCEDURE) /m;

/**
 * The definition with its header (the lines before `AS`) as PostgreSQL prints it: a file wraps a
 * long argument list or `RETURNS TABLE(...)` after a comma, on lines indented by two spaces or
 * more (PostgreSQL's own attribute lines have one), which join back with one space.
 */
function joinHeader(definition: string): string {
  const body = definition.search(/^AS /m);
  if (body < 0) return definition;
  return definition.slice(0, body).replace(/\n {2,}/g, ' ') + definition.slice(body);
}

/** A file read as a stored function; throws when it is not comments followed by one definition. */
export function parseFunctionFile({ file, text }: FunctionFile): StoredFunction {
  const at = text.search(definitionStart);
  if (at < 0) throw new Error(`src/db/functions/${file}: no line starting with CREATE OR REPLACE FUNCTION`);
  const stray = text
    .slice(0, at)
    .split('\n')
    .find((line) => line.trim() !== '' && !line.startsWith('--'));
  if (stray !== undefined)
    throw new Error(`src/db/functions/${file}: only -- comments may come before the definition, found: ${stray}`);
  const definition = joinHeader(text.slice(at));
  if (definition.slice(1).search(definitionStart) >= 0)
    throw new Error(`src/db/functions/${file}: more than one definition`);
  const signature = definition.slice(0, definition.indexOf('\n'));
  const name = /^CREATE OR REPLACE (?:FUNCTION|PROCEDURE) public\.([a-z0-9_]+)\(/.exec(signature)?.[1];
  if (!name || (file !== `${name}.sql` && !file.startsWith(`${name}--`))) {
    throw new Error(
      `src/db/functions/${file}: defines ${name ? `public.${name}` : 'no function of the public schema'}; ` +
        `the file is named after it (<name>.sql)`,
    );
  }
  return { file, text, definition, signature };
}

/** Every file of src/db/functions/, parsed, in name order. */
export function storedFunctions(): StoredFunction[] {
  return functionFiles().map(parseFunctionFile);
}

/**
 * The definition of every function of the public schema, as `pg_get_functiondef` prints it
 * (attributes included), extensions' functions left out; aggregates have none and there are none.
 */
export async function liveFunctionDefinitions(db: Kysely<any>): Promise<string[]> {
  const { rows } = await sql<{ definition: string }>`
    SELECT pg_get_functiondef(p.oid) AS definition
    FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
    WHERE n.nspname = 'public' AND p.prokind IN ('f', 'p')
      AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND
        d.deptype = 'e')
    ORDER BY p.proname, p.oid`.execute(db);
  return rows.map((r) => r.definition);
}

/** The functions whose file says other than the database (or that the database lacks). */
async function differing(db: Kysely<any>, functions: readonly StoredFunction[]): Promise<StoredFunction[]> {
  const live = new Set(await liveFunctionDefinitions(db));
  return functions.filter((f) => !live.has(f.definition));
}

/**
 * Makes every stored function what its file says, with `CREATE OR REPLACE`; answers the files it
 * applied. The common case, every function already as its file, costs one read of the
 * definitions and writes nothing (replacing a function would make every session plan its
 * statements anew, and two processes starting together would race on the catalogue row). The
 * others are applied in one transaction, under a lock so that processes migrating together take
 * turns: first with `check_function_bodies` off, in name order, so that every function exists
 * whatever its body refers to, then again with it on, so that each body is checked. Changing a
 * function's arguments or result type needs a migration that drops it first (docs/stored-functions.md).
 */
export async function applyStoredFunctions(
  db: Kysely<any>,
  functions: readonly StoredFunction[] = storedFunctions(),
): Promise<string[]> {
  if ((await differing(db, functions)).length === 0) return [];
  return db.transaction().execute(async (trx) => {
    await sql`SELECT pg_advisory_xact_lock(hashtext('mwa-stored-functions'))`.execute(trx);
    const stale = await differing(trx, functions);
    await sql`SET LOCAL check_function_bodies = off`.execute(trx);
    for (const f of stale) await sql.raw(f.definition).execute(trx);
    await sql`SET LOCAL check_function_bodies = on`.execute(trx);
    for (const f of stale) await sql.raw(f.definition).execute(trx);
    return stale.map((f) => f.file);
  });
}

/**
 * For a migration that needs a function before the files are applied after the migrations (a new
 * trigger's function): applies that one file as it is now. On a fresh database the migrations all
 * run before any file is applied, so the migration that creates the trigger calls this first.
 */
export async function applyStoredFunction(db: Kysely<any>, file: string): Promise<void> {
  const found = storedFunctions().find((f) => f.file === file);
  if (!found) throw new Error(`no stored function file src/db/functions/${file}`);
  await sql.raw(found.definition).execute(db);
}
