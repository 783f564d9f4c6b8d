import { sql, type Kysely } from 'kysely';

/**
 * Runs a migration script statement by statement: both drivers send each query through the
 * extended protocol, which takes one command at a time. Statements end with `;` at a line end.
 */
export async function runScript(db: Kysely<any>, script: string): Promise<void> {
  const statements = script
    .split(/;\s*$/m)
    .map((s) => s.replace(/^\s*--.*$/gm, '').trim())
    .filter(Boolean);
  for (const statement of statements) await sql.raw(statement).execute(db);
}
