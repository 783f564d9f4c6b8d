/**
 * Summarises `.cpuprofile` files (node --cpu-prof): `npx tsx bench/profile-summary.ts <file|dir>
 * [top] [--last=seconds]`. Prints the share of the sampled time by function (self time) and by
 * file or package (self time), so hot spots show without a viewer. `--last` keeps only the
 * profile's last seconds (the load, not the start-up).
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

const args = process.argv.slice(2);
const target = args.find((a) => !a.startsWith('--') && !/^\d+$/.test(a)) ?? '.';
const top = Number(args.find((a) => /^\d+$/.test(a)) ?? 30);
const lastSeconds = Number(args.find((a) => a.startsWith('--last='))?.slice(7) ?? 0);
const files = statSync(target).isDirectory()
  ? readdirSync(target)
      .filter((f) => f.endsWith('.cpuprofile'))
      .map((f) => join(target, f))
  : [target];

/** A file's short name: the package under node_modules, or the path from src/. */
function where(url: string): string {
  if (!url) return '(native)';
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const parts = url.slice(nm + 13).split('/');
    return parts[0]!.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]!;
  }
  const src = url.indexOf('/src/');
  if (src >= 0) return url.slice(src + 1);
  if (url.startsWith('node:')) return url;
  return url.replace(/^file:\/\//, '');
}

for (const file of files) {
  const p = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  let t = p.startTime;
  const from = lastSeconds > 0 ? p.endTime - lastSeconds * 1e6 : -Infinity;
  for (let i = 0; i < p.samples.length; i++) {
    t += p.timeDeltas[i]!;
    if (t < from) continue;
    const dt = p.timeDeltas[i + 1] ?? 0;
    selfUs.set(p.samples[i]!, (selfUs.get(p.samples[i]!) ?? 0) + Math.max(0, dt));
  }
  const fn = new Map<string, number>();
  const pkg = new Map<string, number>();
  let total = 0;
  let idle = 0;
  for (const [id, us] of selfUs) {
    const n = byId.get(id)!;
    const name = n.callFrame.functionName || '(anonymous)';
    if (name === '(idle)') {
      idle += us;
      continue;
    }
    total += us;
    const key = `${name} ${where(n.callFrame.url)}:${n.callFrame.lineNumber + 1}`;
    fn.set(key, (fn.get(key) ?? 0) + us);
    const w = n.callFrame.url ? where(n.callFrame.url) : name.startsWith('(') ? name : '(native)';
    pkg.set(w, (pkg.get(w) ?? 0) + us);
  }
  const pct = (us: number) => `${((us / total) * 100).toFixed(1).padStart(5)} %`;
  console.log(`${file}: busy ${(total / 1e6).toFixed(2)} s, idle ${(idle / 1e6).toFixed(2)} s`);
  console.log('-- by file or package (self)');
  for (const [k, us] of [...pkg].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${pct(us)}  ${k}`);
  console.log('-- by function (self)');
  for (const [k, us] of [...fn].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${pct(us)}  ${k}`);
}
