/**
 * The stored functions as files (src/db/functions/*.sql, docs/stored-functions.md): after a
 * migrate every function of the public schema is exactly its file's definition
 * (`pg_get_functiondef`, attributes such as `SET plan_cache_mode` included), no function is
 * without a file and no file without its function; every migrate puts back a function changed or
 * dropped behind its back; a file applied again reads back the same (so a migrate with nothing
 * changed writes nothing); no migration defines a function (the files are the only source). Both
 * databases.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { sql } from 'kysely';
import type { DatabaseHandle } from '../src/db/connection.js';
import { migrateToLatest } from '../src/db/migrate.js';
import {
  applyStoredFunction,
  applyStoredFunctions,
  liveFunctionDefinitions,
  parseFunctionFile,
  storedFunctions,
} from '../src/db/stored-functions.js';
import { openTestDatabase } from './support/database.js';

describe('stored functions as files', () => {
  let handle: DatabaseHandle;
  before(async () => {
    handle = await openTestDatabase('mwa-stored-functions-');
  });
  after(async () => {
    await handle?.close();
  });

  const definitionOf = async (name: string) => {
    const { rows } = await sql<{ d: string }>`
      SELECT pg_get_functiondef(p.oid) AS d FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
      WHERE n.nspname = 'public' AND p.proname = ${name}`.execute(handle.db);
    return rows.map((r) => r.d);
  };

  it('every function of the database is its file, byte for byte, and every file is a function', async () => {
    const files = storedFunctions();
    assert.ok(files.length >= 15, `${files.length} files`);
    const live = await liveFunctionDefinitions(handle.db);
    const byDefinition = new Map(files.map((f) => [f.definition, f.file]));
    const withoutFile = live.filter((d) => !byDefinition.has(d)).map((d) => d.slice(0, d.indexOf('(')));
    assert.deepEqual(withoutFile, [], 'functions of the database without a file of that exact definition');
    const withoutFunction = files.filter((f) => !live.includes(f.definition)).map((f) => f.file);
    assert.deepEqual(withoutFunction, [], 'files whose definition is not in the database');
    assert.equal(live.length, files.length);
    assert.equal(new Set(files.map((f) => f.signature)).size, files.length, 'one file per function');
    // Nothing to do on a migrated database: the files are what it holds.
    assert.deepEqual(await applyStoredFunctions(handle.db), []);
    // Attributes once set by migration 051 (plan_cache_mode) are in the files.
    for (const name of [
      'mwa_claim_keys',
      'mwa_post_entries_across',
      'mwa_lock_accounts_across',
      'mwa_insert_deposits_across',
      'mwa_store_results_across',
    ]) {
      assert.match(
        files.find((f) => f.file === `${name}.sql`)!.definition,
        /^ SET plan_cache_mode TO 'force_generic_plan'$/m,
        name,
      );
    }
    // Dropped by migrations 051 and 052: no file.
    for (const dropped of ['mwa_deposit_batch', 'mwa_post_entries', 'mwa_insert_deposits', 'mwa_store_results']) {
      assert.equal(
        files.some((f) => f.file === `${dropped}.sql`),
        false,
        dropped,
      );
    }
  });

  it('a file applied again reads back as the same definition', async () => {
    for (const f of storedFunctions()) await sql.raw(f.definition).execute(handle.db);
    const live = await liveFunctionDefinitions(handle.db);
    for (const f of storedFunctions()) assert.ok(live.includes(f.definition), f.file);
  });

  it('every migrate puts back a function changed or dropped since', async () => {
    const [events] = await definitionOf('mwa_events_notify');
    await sql
      .raw(
        `CREATE OR REPLACE FUNCTION mwa_events_notify() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN ` +
          `NULL; END $$`,
      )
      .execute(handle.db);
    await sql.raw('DROP FUNCTION mwa_store_results_across').execute(handle.db);
    assert.notDeepEqual(await definitionOf('mwa_events_notify'), [events]);
    assert.deepEqual(await definitionOf('mwa_store_results_across'), []);
    assert.equal(await migrateToLatest(handle.db), 0, 'no migration ran');
    assert.deepEqual(await definitionOf('mwa_events_notify'), [events]);
    const file = storedFunctions().find((f) => f.file === 'mwa_store_results_across.sql')!;
    assert.deepEqual(await definitionOf('mwa_store_results_across'), [file.definition]);
    assert.deepEqual(await applyStoredFunctions(handle.db), []);
    // One file on its own, as a migration that attaches a new trigger function calls it.
    await sql.raw('DROP FUNCTION mwa_store_results_across').execute(handle.db);
    await applyStoredFunction(handle.db, 'mwa_store_results_across.sql');
    assert.deepEqual(await definitionOf('mwa_store_results_across'), [file.definition]);
    await assert.rejects(applyStoredFunction(handle.db, 'mwa_nothing.sql'), /no stored function file/);
  });

  it('a file holds -- comments, then one definition of the function it is named after', () => {
    const definition =
      'CREATE OR REPLACE FUNCTION public.mwa_x()\n RETURNS void\n LANGUAGE plpgsql\nAS ' +
      '$function$\nBEGIN\nEND\n$function$\n';
    const parsed = parseFunctionFile({ file: 'mwa_x.sql', text: `-- mwa_x\n--\n-- Does nothing.\n${definition}` });
    assert.equal(parsed.definition, definition);
    assert.equal(parsed.signature, 'CREATE OR REPLACE FUNCTION public.mwa_x()');
    // A long header wraps after a comma, continued by lines indented two spaces or more.
    const long =
      'CREATE OR REPLACE FUNCTION public.mwa_x(p_a text, p_b text)\n RETURNS TABLE(a text, b text)\n' +
      ' LANGUAGE plpgsql\nAS $function$\nBEGIN\n  RETURN QUERY SELECT p_a,\n    p_b;\nEND\n$function$\n';
    const wrapped = long
      .replace('(p_a text, p_b', '(p_a text,\n    p_b')
      .replace('TABLE(a text, b', 'TABLE(a text,\n    b');
    const parsedWrapped = parseFunctionFile({ file: 'mwa_x.sql', text: `-- mwa_x\n${wrapped}` });
    assert.equal(parsedWrapped.definition, long);
    assert.equal(parsedWrapped.signature, 'CREATE OR REPLACE FUNCTION public.mwa_x(p_a text, p_b text)');
    assert.throws(() => parseFunctionFile({ file: 'mwa_y.sql', text: definition }), /defines public\.mwa_x/);
    assert.throws(() => parseFunctionFile({ file: 'mwa_x.sql', text: `/* a */\n${definition}` }), /only -- comments/);
    assert.throws(
      () => parseFunctionFile({ file: 'mwa_x.sql', text: 'CREATE FUNCTION mwa_x() RETURNS void' }),
      /no line starting/,
    );
    assert.throws(() => parseFunctionFile({ file: 'mwa_x.sql', text: definition + definition }), /more than one/);
  });

  it("no migration defines or alters a function: a trigger's migration applies the file", () => {
    const dir = new URL('../src/db/migrations/', import.meta.url);
    const migrations = readdirSync(dir).filter((f) => /^\d{3}_.*\.ts$/.test(f));
    assert.ok(migrations.length >= 50, `${migrations.length} migrations`);
    for (const file of migrations) {
      const text = readFileSync(new URL(file, dir), 'utf8');
      assert.doesNotMatch(
        text,
        /\b(CREATE\s+(OR\s+REPLACE\s+)?(FUNCTION|PROCEDURE)|ALTER\s+(FUNCTION|PROCEDURE))\b/i,
        `${file}: a function is changed in its file in src/db/functions/, not in a migration ` +
          `(docs/stored-functions.md)`,
      );
    }
  });
});
