import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';

/** pgbench from PATH or from /usr/lib/postgresql/<version>/bin; undefined when absent. */
export function findPgbench(): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(':'))
    if (dir && existsSync(`${dir}/pgbench`)) return `${dir}/pgbench`;
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  for (const v of readdirSync(root).sort().reverse())
    if (existsSync(`${root}/${v}/bin/pgbench`)) return `${root}/${v}/bin/pgbench`;
  return undefined;
}

/**
 * `pgbench -N` (the 5-statement write transaction without the branch/teller hot rows) and
 * `pgbench -S -M prepared` (one indexed read) with the bench's connection count, on a database of
 * their own (scale 1, initialised once per run).
 */
export function runPgbench(
  pgbench: string,
  databaseUrl: string,
  clients: number,
  seconds: number,
): { writeTps: number; readTps: number } {
  execFileSync(pgbench, ['-i', '-q', '-s', '1', databaseUrl], { stdio: 'ignore' });
  const tps = (args: string[]) => {
    const out = execFileSync(pgbench, [...args, '-c', String(clients), '-j', '2', '-T', String(seconds), databaseUrl], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const m = /tps = ([\d.]+) \(without initial connection time\)/.exec(out) ?? /tps = ([\d.]+)/.exec(out);
    return m ? Math.round(Number(m[1])) : 0;
  };
  return { writeTps: tps(['-N']), readTps: tps(['-S', '-M', 'prepared']) };
}
