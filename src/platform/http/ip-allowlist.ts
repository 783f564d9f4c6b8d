import { isIPv4, isIPv6 } from 'node:net';

/**
 * Production keys carry an allow-list, one entry per line: a single IP, a prefix wildcard
 * `a.b.c.*`, or CIDR with only /8, /16 or /24. Any other notation matches nothing (and raises no
 * error). IPv6 entries match only the exact address.
 */
type Matcher = (ip: string) => boolean;

const never: Matcher = () => false;

function ipv4Octets(ip: string): number[] | null {
  return isIPv4(ip) ? ip.split('.').map(Number) : null;
}

function normaliseIPv6(ip: string): string | null {
  if (!isIPv6(ip)) return null;
  try {
    return new URL(`http://[${ip}]/`).hostname;
  } catch {
    return null;
  }
}

/** An IPv4 client seen through a dual-stack socket arrives as ::ffff:a.b.c.d. */
export function unmapIPv4(ip: string): string {
  const m = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  return m ? m[1]! : ip;
}

/**
 * What one allow-list line is, read once: both the matcher (`compileEntry`) and the console's
 * preview of a line (`describeEntry`) are built from this, so the preview can never disagree
 * with what the pipeline lets through.
 */
export type AllowlistEntry =
  | { kind: 'ipv4'; address: string }
  | { kind: 'ipv6'; address: string }
  | { kind: 'ipv4-prefix'; octets: number[]; notation: 'wildcard' | 'cidr' }
  | { kind: 'nothing'; reason: 'empty' | 'notation' | 'cidr-prefix' };

export function parseEntry(raw: string): AllowlistEntry {
  const entry = raw.trim();
  if (entry === '') return { kind: 'nothing', reason: 'empty' };
  if (isIPv4(entry)) return { kind: 'ipv4', address: entry };
  if (isIPv6(entry)) {
    const address = normaliseIPv6(entry);
    return address === null ? { kind: 'nothing', reason: 'notation' } : { kind: 'ipv6', address };
  }
  const wildcard = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.\*$/.exec(entry);
  if (wildcard) {
    const prefix = `${wildcard[1]}.${wildcard[2]}.${wildcard[3]}.0`;
    if (!isIPv4(prefix)) return { kind: 'nothing', reason: 'notation' };
    return { kind: 'ipv4-prefix', octets: prefix.split('.').slice(0, 3).map(Number), notation: 'wildcard' };
  }
  const cidr = /^(\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3})\/(\d{1,2})$/.exec(entry);
  if (cidr && isIPv4(cidr[1]!)) {
    if (!['8', '16', '24'].includes(cidr[2]!)) return { kind: 'nothing', reason: 'cidr-prefix' };
    return {
      kind: 'ipv4-prefix',
      octets: cidr[1]!
        .split('.')
        .map(Number)
        .slice(0, Number(cidr[2]) / 8),
      notation: 'cidr',
    };
  }
  return { kind: 'nothing', reason: 'notation' };
}

export function compileEntry(raw: string): Matcher {
  const entry = parseEntry(raw);
  switch (entry.kind) {
    case 'ipv4':
      return (ip) => ip === entry.address;
    case 'ipv6':
      return (ip) => normaliseIPv6(ip) === entry.address;
    case 'ipv4-prefix':
      return (ip) => {
        const o = ipv4Octets(ip);
        return o !== null && entry.octets.every((b, i) => o[i] === b);
      };
    case 'nothing':
      return never;
  }
}

/** In words, what one line lets through (the console's preview of an allow-list). */
export function describeEntry(raw: string): { matches: boolean; text: string } {
  const entry = parseEntry(raw);
  switch (entry.kind) {
    case 'ipv4':
      return { matches: true, text: `exactly ${entry.address}` };
    case 'ipv6':
      return { matches: true, text: `exactly the IPv6 address ${entry.address.replace(/^\[|\]$/g, '')}` };
    case 'ipv4-prefix': {
      const free = 4 - entry.octets.length;
      const low = [...entry.octets, ...Array(free).fill(0)].join('.');
      const high = [...entry.octets, ...Array(free).fill(255)].join('.');
      return { matches: true, text: `${low} to ${high} (${(256 ** free).toLocaleString('en')} addresses)` };
    }
    case 'nothing':
      return {
        matches: false,
        text:
          entry.reason === 'cidr-prefix'
            ? 'nothing: only /8, /16 and /24 prefixes are accepted'
            : entry.reason === 'empty'
              ? 'nothing (empty line)'
              : 'nothing: not an IP address, a.b.c.* or a.b.c.d/8, /16, /24',
      };
  }
}

export function parseAllowlist(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter(Boolean);
}

export function isAllowed(allowlist: string, clientIp: string): boolean {
  const ip = unmapIPv4(clientIp);
  return parseAllowlist(allowlist).some((entry) => compileEntry(entry)(ip));
}
