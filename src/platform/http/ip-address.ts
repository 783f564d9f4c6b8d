import { isIPv6 } from 'node:net';

/** The eight 16-bit groups of an IPv6 address (zone and embedded IPv4 forms included), or null. */
export function ipv6Hextets(ip: string): number[] | null {
  const address = ip.split('%')[0]!;
  if (!isIPv6(address)) return null;
  let text = address;
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4) {
    const [a, b, c, d] = v4[1]!.split('.').map(Number) as [number, number, number, number];
    text = `${text.slice(0, -v4[1]!.length)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((h) => parseInt(h, 16)));
  const left = parse(head);
  if (tail === undefined) return left.length === 8 ? left : null;
  const right = parse(tail);
  return [...left, ...Array<number>(8 - left.length - right.length).fill(0), ...right];
}
