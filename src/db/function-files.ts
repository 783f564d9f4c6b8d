import { readdirSync, readFileSync } from 'node:fs';

/** One file of src/db/functions/: its name (`mwa_post_entry.sql`) and its text. */
export interface FunctionFile {
  file: string;
  text: string;
}

/**
 * The stored functions' files (src/db/functions/*.sql, docs/stored-functions.md), in name order,
 * read from their folder: under tsx and in the tests' bundles (scripts/test-build.mjs keeps this
 * module's `import.meta.url`). The production build (scripts/build.mjs) replaces this module with
 * one that holds the files' texts, so dist/main.js reads nothing of the source tree.
 */
export function functionFiles(): FunctionFile[] {
  const dir = new URL('./functions/', import.meta.url);
  return readdirSync(dir)
    .filter((file) => file.endsWith('.sql'))
    .sort()
    .map((file) => ({ file, text: readFileSync(new URL(file, dir), 'utf8') }));
}
