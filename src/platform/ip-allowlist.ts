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

export function compileEntry(raw: string): Matcher {
  const entry = raw.trim();
  if (entry === '') return never;
  if (isIPv4(entry)) return (ip) => ip === entry;
  if (isIPv6(entry)) {
    const want = normaliseIPv6(entry);
    return (ip) => normaliseIPv6(ip) === want;
  }
  const wildcard = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.\*$/.exec(entry);
  if (wildcard) {
    const prefix = `${wildcard[1]}.${wildcard[2]}.${wildcard[3]}.0`;
    if (!isIPv4(prefix)) return never;
    const head = prefix.split('.').slice(0, 3).map(Number);
    return (ip) => {
      const o = ipv4Octets(ip);
      return o !== null && o[0] === head[0] && o[1] === head[1] && o[2] === head[2];
    };
  }
  const cidr = /^(\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3})\/(\d{1,2})$/.exec(entry);
  if (cidr && isIPv4(cidr[1]!) && ['8', '16', '24'].includes(cidr[2]!)) {
    const octets = Number(cidr[2]) / 8;
    const base = cidr[1]!.split('.').map(Number).slice(0, octets);
    return (ip) => {
      const o = ipv4Octets(ip);
      return o !== null && base.every((b, i) => o[i] === b);
    };
  }
  return never;
}

export function parseAllowlist(text: string): string[] {
  return text.split(/\r?\n/).map((l) => l.trim()).filter(Boolean);
}

export function isAllowed(allowlist: string, clientIp: string): boolean {
  const ip = unmapIPv4(clientIp);
  return parseAllowlist(allowlist).some((entry) => compileEntry(entry)(ip));
}
