import { BlockList, isIP } from 'node:net';
import { lookup as dnsLookup } from 'node:dns/promises';
import type { Config } from '../../platform/config.js';
import type { Environment } from '../../db/schema.js';

/**
 * Where a webhook may be sent. In production the URL must be https and every address its host
 * resolves to must be public; the sandbox may also use http and loopback or private addresses
 * (local development; `WEBHOOK_PRIVATE_TARGETS`). Metadata, link-local, unspecified, multicast
 * and reserved addresses are refused everywhere. The check runs when an endpoint is saved and
 * again before every attempt, and the request connects to the address that was checked.
 */

export type AddressClass = 'public' | 'loopback' | 'private' | 'link_local' | 'metadata' | 'unspecified' | 'multicast' | 'reserved';

function list(entries: Array<[string, number]>): BlockList {
  const b = new BlockList();
  for (const [net, prefix] of entries) b.addSubnet(net, prefix, net.includes(':') ? 'ipv6' : 'ipv4');
  return b;
}

// Checked in this order: metadata before link-local and private (they contain it).
const classes: Array<[AddressClass, BlockList]> = [
  ['metadata', list([['169.254.169.254', 32], ['fd00:ec2::254', 128], ['100.100.100.200', 32]])],
  ['unspecified', list([['0.0.0.0', 8], ['::', 128]])],
  ['loopback', list([['127.0.0.0', 8], ['::1', 128]])],
  ['link_local', list([['169.254.0.0', 16], ['fe80::', 10]])],
  ['private', list([['10.0.0.0', 8], ['172.16.0.0', 12], ['192.168.0.0', 16], ['100.64.0.0', 10], ['fc00::', 7]])],
  ['multicast', list([['224.0.0.0', 4], ['ff00::', 8]])],
  ['reserved', list([
    ['240.0.0.0', 4], ['192.0.0.0', 24], ['192.0.2.0', 24], ['198.18.0.0', 15], ['198.51.100.0', 24], ['203.0.113.0', 24],
    // IPv4-compatible, NAT64 and 6to4 forms embed an IPv4 address that could be internal; documentation range.
    ['::', 96], ['64:ff9b::', 96], ['64:ff9b:1::', 48], ['2002::', 16], ['2001:db8::', 32], ['100::', 64],
  ])],
];

/** The class of one IP address (v4, v6, or v4-mapped v6). */
export function classifyAddress(address: string): AddressClass {
  const family = isIP(address);
  if (family === 0) throw new TypeError(`not an IP address: ${address}`);
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  const ip = mapped ? mapped[1]! : address;
  const type = isIP(ip) === 4 ? 'ipv4' : 'ipv6';
  for (const [cls, blocks] of classes) if (blocks.check(ip, type)) return cls;
  return 'public';
}

/** Whether a target of this class may be used; `allowPrivate` admits loopback and private only. */
export function addressAllowed(cls: AddressClass, allowPrivate: boolean): boolean {
  return cls === 'public' || (allowPrivate && (cls === 'loopback' || cls === 'private'));
}

/** Whether this environment may target loopback/private addresses and use plain http. */
export function allowsPrivateTargets(config: Pick<Config, 'webhookPrivateTargets'>, environment: Environment): boolean {
  return config.webhookPrivateTargets === 'all' || (config.webhookPrivateTargets === 'sandbox' && environment === 'sandbox');
}

export const maxUrlLength = 2048;

export type UrlCheck = { ok: true; url: URL; host: string } | { ok: false; reason: string };

/** Shape only (no DNS): parses, scheme, no credentials, a host. */
export function checkUrlShape(raw: string, allowPrivate: boolean): UrlCheck {
  if (raw.length > maxUrlLength) return { ok: false, reason: 'too_long' };
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: 'invalid_url' };
  }
  if (url.protocol !== 'https:' && !(allowPrivate && url.protocol === 'http:')) return { ok: false, reason: 'https_required' };
  if (url.username !== '' || url.password !== '') return { ok: false, reason: 'credentials_not_allowed' };
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (host === '') return { ok: false, reason: 'invalid_url' };
  return { ok: true, url, host };
}

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

export type LookupAll = (host: string) => Promise<ResolvedAddress[]>;

export const systemLookup: LookupAll = async (host) =>
  (await dnsLookup(host, { all: true, verbatim: true })).map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));

export const dnsTimeoutMs = 5_000;

export type TargetCheck = { ok: true; url: URL; host: string; address: ResolvedAddress } | { ok: false; reason: string };

/**
 * Resolves the host (all addresses, at most `dnsTimeoutMs`) and refuses the URL when any address
 * is not allowed. The first address is the one to connect to.
 */
export async function resolveTarget(raw: string, allowPrivate: boolean, lookup: LookupAll = systemLookup): Promise<TargetCheck> {
  const shape = checkUrlShape(raw, allowPrivate);
  if (!shape.ok) return shape;
  let addresses: ResolvedAddress[];
  const literal = isIP(shape.host);
  if (literal !== 0) {
    addresses = [{ address: shape.host, family: literal === 6 ? 6 : 4 }];
  } else {
    let timer: NodeJS.Timeout | undefined;
    try {
      addresses = await Promise.race([
        lookup(shape.host),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error('dns timeout')), dnsTimeoutMs);
        }),
      ]);
    } catch {
      return { ok: false, reason: 'unresolvable' };
    } finally {
      clearTimeout(timer);
    }
  }
  if (addresses.length === 0) return { ok: false, reason: 'unresolvable' };
  for (const a of addresses) {
    const cls = classifyAddress(a.address);
    if (!addressAllowed(cls, allowPrivate)) return { ok: false, reason: `${cls}_address` };
  }
  return { ok: true, url: shape.url, host: shape.host, address: addresses[0]! };
}
