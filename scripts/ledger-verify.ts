/**
 * `npm run ledger:verify`: checks the ledger's invariants on the service's database
 * (DATABASE_URL, else the embedded database in DATA_DIR, as the server opens it) and exits 1
 * when something is wrong. The embedded database is one process's: stop the server first, or
 * call GET /admin/v1/ledger/verify on the running one.
 */
import { openDatabase } from '../src/db/connection.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { loadConfig } from '../src/platform/config/config.js';
import { verifyLedger } from '../src/money/verify.js';

async function main(): Promise<number> {
  const config = loadConfig();
  const handle = await openDatabase(config.databaseUrl, config.dataDir, { pooler: config.databasePooler });
  try {
    await migrateToLatest(handle.db);
    const where =
      handle.kind === 'postgres'
        ? 'PostgreSQL (DATABASE_URL)'
        : `embedded database in ${config.databaseUrl === 'memory://' ? 'memory' : config.dataDir}`;
    const started = Date.now();
    const report = await verifyLedger(handle.db);
    const { entries, postings, accounts } = report.checked;
    console.log(`Ledger check of the ${where}`);
    console.log(
      `  checked ${entries} entries, ${postings} postings, ${accounts} accounts in ${Date.now() - started} ms`,
    );
    if (report.ok) {
      console.log(
        '  OK: every entry balances, every asset sums to zero, every balance matches its postings, none is ' +
          'negative, custody matches the members',
      );
      return 0;
    }
    console.log(`  FAILED: ${report.problems.length} problem(s)`);
    for (const problem of report.problems) console.log(`  - ${problem}`);
    return 1;
  } finally {
    await handle.close();
  }
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    console.error('ledger check could not run:', err);
    process.exitCode = 2;
  },
);
