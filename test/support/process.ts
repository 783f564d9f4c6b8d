import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

export interface ServiceProcess {
  child: ChildProcess;
  publicUrl: string;
  adminUrl: string;
  output: () => string;
  /** Resolves with the exit code once the process has ended. */
  exited: Promise<number | null>;
}

/**
 * Starts the real service (`src/main.ts`) as its own process and waits until it listens. The bound
 * is generous: a first start creates the embedded cluster, which takes a while on a busy machine
 * running test files in parallel; a healthy start returns as soon as the line is printed.
 */
export async function spawnService(env: Record<string, string>, timeoutMs = 120_000): Promise<ServiceProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: root,
    env: { ...process.env, PORT: '0', ADMIN_PORT: '0', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const m = /Merchant Wallet API on (\S+) \(operator API on (\S+)\)/.exec(out);
    if (m) return { child, publicUrl: m[1]!, adminUrl: m[2]!, output: () => out, exited };
    if (child.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  child.kill('SIGKILL');
  throw new Error(`service did not start:\n${out}`);
}
