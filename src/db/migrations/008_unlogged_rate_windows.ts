import type { Kysely } from 'kysely';
import { runScript } from '../sql-script.js';

/**
 * Rate-limit counters are hit by every authenticated request. As an unlogged table their writes
 * skip the write-ahead log, so the commit of the hot-path statement waits for no disk flush. A
 * crash of the database empties them: windows restart, which only ever admits more, never less.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runScript(db, `ALTER TABLE rate_limit_windows SET UNLOGGED;`);
}
