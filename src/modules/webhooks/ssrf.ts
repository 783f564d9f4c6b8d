import { BlockList, isIP } from 'node:net';
import { lookup as dnsLookup } from 'node:dns/promises';
import type { Config } from '../../platform/config/config.js';
import type { Environment } from '../../db/schema.js';
import { ipv6Hextets } from '../../platform/http/ip-address.js';

/**
 * Where a webhook may be sent. In production the URL must be https and every address its host
 * resolves to must be public: outside every range of the IANA IPv4 and IPv6 Special-Purpose
 * Address Registries and multicast, and for IPv6 inside global unicast 2000::/3. The sandbox may
 * also use http and loopback or private addresses (local development; `WEBHOOK_PRIVATE_TARGETS`).
 * Metadata, link-local, unspecified, multicast and reserved addresses are refused everywhere. The
 * check runs when an endpoint is saved and again before every attempt, and the request connects
 * to the address that was checked.
 */

export type AddressClass =
  'public' | 'loopback' | 'private' | 'link_local' | 'metadata' | 'unspecified' | 'multicast' | 'reserved';

type Range = [network: string, prefix: number, registryEntry: string];

function list(entries: Range[]): BlockList {
  const b = new BlockList();
  for (const [net, prefix] of entries) b.addSubnet(net, prefix, net.includes(':') ? 'ipv6' : 'ipv4');
  return b;
}

/**
 * Checked in this order: metadata before link-local and private (they contain it). Every IANA
 * special-purpose entry is listed, also where a wider one covers it, so the table reads against
 * the registries (IPv4 and IPv6 Special-Purpose Address Registries, as of 2025).
 */
const classes: Array<[AddressClass, Range[]]> = [
  [
    'metadata',
    [
      ['169.254.169.254', 32, 'cloud metadata'],
      ['100.100.100.200', 32, 'cloud metadata'],
      ['fd00:ec2::254', 128, 'cloud metadata'],
    ],
  ],
  [
    'unspecified',
    [
      ['0.0.0.0', 8, '"this network"'],
      ['::', 128, 'unspecified'],
    ],
  ],
  [
    'loopback',
    [
      ['127.0.0.0', 8, 'loopback'],
      ['::1', 128, 'loopback'],
    ],
  ],
  [
    'link_local',
    [
      ['169.254.0.0', 16, 'link-local'],
      ['fe80::', 10, 'link-local unicast'],
    ],
  ],
  [
    'private',
    [
      ['10.0.0.0', 8, 'private-use'],
      ['172.16.0.0', 12, 'private-use'],
      ['192.168.0.0', 16, 'private-use'],
      ['100.64.0.0', 10, 'shared address space'],
      ['fc00::', 7, 'unique-local'],
    ],
  ],
  [
    'multicast',
    [
      ['224.0.0.0', 4, 'multicast'],
      ['ff00::', 8, 'multicast'],
    ],
  ],
  [
    'reserved',
    [
      ['192.0.0.0', 24, 'IETF protocol assignments'],
      ['192.0.2.0', 24, 'documentation (TEST-NET-1)'],
      ['192.31.196.0', 24, 'AS112-v4'],
      ['192.52.193.0', 24, 'AMT'],
      ['192.88.99.0', 24, 'deprecated 6to4 relay anycast'],
      ['192.175.48.0', 24, 'direct delegation AS112'],
      ['198.18.0.0', 15, 'benchmarking'],
      ['198.51.100.0', 24, 'documentation (TEST-NET-2)'],
      ['203.0.113.0', 24, 'documentation (TEST-NET-3)'],
      ['240.0.0.0', 4, 'reserved'],
      ['255.255.255.255', 32, 'limited broadcast'],
      // IPv6 forms that embed an IPv4 address are refused whole, not decoded (IPv4-mapped aside).
      ['::', 96, 'IPv4-compatible (deprecated)'],
      ['::ffff:0:0:0', 96, 'IPv4-translated'],
      ['64:ff9b::', 96, 'IPv4/IPv6 translation'],
      ['64:ff9b:1::', 48, 'local-use IPv4/IPv6 translation'],
      ['100::', 64, 'discard-only'],
      ['100:0:0:1::', 64, 'dummy prefix'],
      [
        '2001::',
        23,
        'IETF protocol assignments (Teredo 2001::/32, benchmarking 2001:2::/48, AMT, AS112, ORCHID, ' +
          'ORCHIDv2, drone remote ID)',
      ],
      ['2001:db8::', 32, 'documentation'],
      ['2002::', 16, '6to4'],
      ['2620:4f:8000::', 48, 'direct delegation AS112'],
      ['3fff::', 20, 'documentation'],
      ['5f00::', 16, 'segment routing SIDs'],
      ['fec0::', 10, 'site-local (deprecated)'],
    ],
  ],
];

const compiled: Array<[AddressClass, BlockList]> = classes.map(([cls, ranges]) => [cls, list(ranges)]);

/** IPv6 outside global unicast is reserved by the IETF (or special-purpose, listed above). */
const globalUnicast = list([['2000::', 3, 'global unicast']]);

/** The IPv4 address an IPv4-mapped IPv6 address (::ffff:0:0/96) carries, or null. */
function mappedIPv4(hextets: number[]): string | null {
  if (hextets.slice(0, 5).some((h) => h !== 0) || hextets[5] !== 0xffff) return null;
  const [hi, lo] = [hextets[6]!, hextets[7]!];
  return `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;
}

/** The class of one IP address (v4, v6, or v4-mapped v6 judged as its IPv4 address). */
export function classifyAddress(address: string): AddressClass {
  const ip = address.split('%')[0]!; // a zone (fe80::1%eth0) says nothing about the range
  const family = isIP(ip);
  if (family === 0) throw new TypeError(`not an IP address: ${address}`);
  if (family === 6) {
    const mapped = mappedIPv4(ipv6Hextets(ip)!);
    if (mapped) return classifyAddress(mapped);
  }
  const type = family === 4 ? 'ipv4' : 'ipv6';
  for (const [cls, blocks] of compiled) if (blocks.check(ip, type)) return cls;
  if (type === 'ipv6' && !globalUnicast.check(ip, 'ipv6')) return 'reserved';
  return 'public';
}

/** Whether a target of this class may be used; `allowPrivate` admits loopback and private only. */
export function addressAllowed(cls: AddressClass, allowPrivate: boolean): boolean {
  return cls === 'public' || (allowPrivate && (cls === 'loopback' || cls === 'private'));
}

/** Whether this environment may target loopback/private addresses and use plain http. */
export function allowsPrivateTargets(config: Pick<Config, 'webhookPrivateTargets'>, environment: Environment): boolean {
  return (
    config.webhookPrivateTargets === 'all' || (config.webhookPrivateTargets === 'sandbox' && environment === 'sandbox')
  );
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
  if (url.protocol !== 'https:' && !(allowPrivate && url.protocol === 'http:'))
    return { ok: false, reason: 'https_required' };
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
  (await dnsLookup(host, { all: true, verbatim: true })).map((a) => ({
    address: a.address,
    family: a.family === 6 ? 6 : 4,
  }));

export const dnsTimeoutMs = 5_000;

export type TargetCheck =
  { ok: true; url: URL; host: string; address: ResolvedAddress } | { ok: false; reason: string };

/**
 * Resolves the host (all addresses, at most `dnsTimeoutMs`) and refuses the URL when any address
 * is not allowed. The first address is the one to connect to.
 */
export async function resolveTarget(
  raw: string,
  allowPrivate: boolean,
  lookup: LookupAll = systemLookup,
): Promise<TargetCheck> {
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
