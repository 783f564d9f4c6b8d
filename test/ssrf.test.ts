import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isIP } from 'node:net';
import {
  addressAllowed,
  checkUrlShape,
  classifyAddress,
  resolveTarget,
  type AddressClass,
} from '../src/modules/webhooks/ssrf.js';

/**
 * Issue 9, point 10: every range of the IANA IPv4 and IPv6 Special-Purpose Address Registries
 * (and multicast) is refused as a production webhook target. Pure functions, no network.
 * Each row: the registry entry, an address at its start, one inside, one at its end (and the class
 * the address belongs to, where it is not simply reserved).
 */
type Range = [name: string, first: string, inside: string, last: string];

/** Most special ranges are simply reserved. */
const reservedRanges: Range[] = [
  ['192.0.0.0/24 IETF protocol assignments', '192.0.0.0', '192.0.0.9', '192.0.0.255'],
  ['192.0.2.0/24 documentation (TEST-NET-1)', '192.0.2.0', '192.0.2.1', '192.0.2.255'],
  ['192.31.196.0/24 AS112-v4', '192.31.196.0', '192.31.196.1', '192.31.196.255'],
  ['192.52.193.0/24 AMT', '192.52.193.0', '192.52.193.1', '192.52.193.255'],
  ['192.88.99.0/24 deprecated 6to4 relay anycast', '192.88.99.0', '192.88.99.1', '192.88.99.255'],
  ['192.175.48.0/24 direct delegation AS112', '192.175.48.0', '192.175.48.1', '192.175.48.255'],
  ['198.18.0.0/15 benchmarking', '198.18.0.0', '198.19.1.1', '198.19.255.255'],
  ['198.51.100.0/24 documentation (TEST-NET-2)', '198.51.100.0', '198.51.100.1', '198.51.100.255'],
  ['203.0.113.0/24 documentation (TEST-NET-3)', '203.0.113.0', '203.0.113.1', '203.0.113.255'],
  ['240.0.0.0/4 reserved', '240.0.0.0', '250.1.2.3', '255.255.255.254'],
  ['255.255.255.255/32 limited broadcast', '255.255.255.255', '255.255.255.255', '255.255.255.255'],
  ['::/96 IPv4-compatible (deprecated)', '::2', '::a00:1', '::ffff:ffff'],
  ['::ffff:0:0:0/96 IPv4-translated', '::ffff:0:0:0', '::ffff:0:7f00:1', '::ffff:0:ffff:ffff'],
  ['64:ff9b::/96 IPv4/IPv6 translation (NAT64)', '64:ff9b::', '64:ff9b::a00:1', '64:ff9b::ffff:ffff'],
  ['64:ff9b:1::/48 local-use translation', '64:ff9b:1::', '64:ff9b:1:2::3', '64:ff9b:1:ffff:ffff:ffff:ffff:ffff'],
  ['100::/64 discard-only', '100::', '100::1', '100::ffff:ffff:ffff:ffff'],
  ['100:0:0:1::/64 dummy prefix', '100:0:0:1::', '100:0:0:1::1', '100:0:0:1:ffff:ffff:ffff:ffff'],
  ['2001::/23 IETF protocol assignments', '2001::', '2001:1::1', '2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff'],
  ['2001::/32 Teredo', '2001::', '2001:0:4136:e378:8000:63bf:3fff:fdd2', '2001:0:ffff:ffff:ffff:ffff:ffff:ffff'],
  ['2001:2::/48 benchmarking', '2001:2::', '2001:2::1', '2001:2:0:ffff:ffff:ffff:ffff:ffff'],
  ['2001:3::/32 AMT', '2001:3::', '2001:3::1', '2001:3:ffff:ffff:ffff:ffff:ffff:ffff'],
  ['2001:4:112::/48 AS112-v6', '2001:4:112::', '2001:4:112::1', '2001:4:112:ffff:ffff:ffff:ffff:ffff'],
  ['2001:10::/28 ORCHID (deprecated)', '2001:10::', '2001:10::1', '2001:1f:ffff:ffff:ffff:ffff:ffff:ffff'],
  ['2001:20::/28 ORCHIDv2', '2001:20::', '2001:20::1', '2001:2f:ffff:ffff:ffff:ffff:ffff:ffff'],
  ['2001:30::/28 drone remote ID', '2001:30::', '2001:30::1', '2001:3f:ffff:ffff:ffff:ffff:ffff:ffff'],
  ['2001:db8::/32 documentation', '2001:db8::', '2001:db8::1', '2001:db8:ffff:ffff:ffff:ffff:ffff:ffff'],
  ['2002::/16 6to4', '2002::', '2002:7f00:1::1', '2002:ffff:ffff:ffff:ffff:ffff:ffff:ffff'],
  ['2620:4f:8000::/48 direct AS112', '2620:4f:8000::', '2620:4f:8000::1', '2620:4f:8000:ffff:ffff:ffff:ffff:ffff'],
  ['3fff::/20 documentation', '3fff::', '3fff:abc::1', '3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff'],
  ['5f00::/16 segment routing SIDs', '5f00::', '5f00::1', '5f00:ffff:ffff:ffff:ffff:ffff:ffff:ffff'],
  ['fec0::/10 site-local (deprecated)', 'fec0::', 'fec0::1', 'feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff'],
  ['outside 2000::/3 (reserved by the IETF)', '4000::', '8000::1', 'fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff'],
];

/** The other ranges, with their class. */
const classedRanges: Array<[...Range, AddressClass]> = [
  ['0.0.0.0/8 "this network"', '0.0.0.0', '0.1.2.3', '0.255.255.255', 'unspecified'],
  ['::/128 unspecified', '::', '::', '::', 'unspecified'],
  ['127.0.0.0/8 loopback', '127.0.0.0', '127.0.0.1', '127.255.255.255', 'loopback'],
  ['::1/128 loopback', '::1', '::1', '::1', 'loopback'],
  ['10.0.0.0/8 private-use', '10.0.0.0', '10.20.30.40', '10.255.255.255', 'private'],
  ['100.64.0.0/10 shared address space', '100.64.0.0', '100.100.1.1', '100.127.255.255', 'private'],
  ['172.16.0.0/12 private-use', '172.16.0.0', '172.20.1.1', '172.31.255.255', 'private'],
  ['192.168.0.0/16 private-use', '192.168.0.0', '192.168.1.1', '192.168.255.255', 'private'],
  ['fc00::/7 unique-local', 'fc00::', 'fd12:3456::1', 'fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'private'],
  ['169.254.0.0/16 link-local', '169.254.0.0', '169.254.1.1', '169.254.255.255', 'link_local'],
  ['fe80::/10 link-local unicast', 'fe80::', 'fe80::1', 'febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'link_local'],
  ['224.0.0.0/4 multicast', '224.0.0.0', '239.1.2.3', '239.255.255.255', 'multicast'],
  ['ff00::/8 multicast', 'ff00::', 'ff02::1', 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'multicast'],
];

/** The rows of one address family, each with its class. */
function rangesOf(family: 'ipv4' | 'ipv6'): Array<[...Range, AddressClass]> {
  const rows = [...classedRanges, ...reservedRanges.map((row): [...Range, AddressClass] => [...row, 'reserved'])];
  return rows.filter(([, first]) => isIP(first) === (family === 'ipv4' ? 4 : 6));
}

function refusedInProduction(address: string): boolean {
  return !addressAllowed(classifyAddress(address), false);
}

describe('webhook targets: IANA special-purpose IPv4 ranges', () => {
  for (const [name, first, inside, last, cls] of rangesOf('ipv4')) {
    it(`refuses ${name}`, () => {
      for (const address of [first, inside, last]) {
        assert.equal(classifyAddress(address), cls, address);
        assert.ok(refusedInProduction(address), address);
        // The same address IPv4-mapped (dotted and hex forms) is judged as the IPv4 address.
        assert.equal(classifyAddress(`::ffff:${address}`), cls, `::ffff:${address}`);
        const [a, b, c, d] = address.split('.').map(Number) as [number, number, number, number];
        const hex = `::ffff:${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
        assert.equal(classifyAddress(hex), cls, hex);
      }
    });
  }
});

describe('webhook targets: IANA special-purpose IPv6 ranges', () => {
  for (const [name, first, inside, last, cls] of rangesOf('ipv6')) {
    it(`refuses ${name}`, () => {
      for (const address of [first, inside, last]) {
        assert.equal(classifyAddress(address), cls, address);
        assert.ok(refusedInProduction(address), address);
      }
    });
  }
});

describe('webhook targets: the audit findings and the public neighbours', () => {
  it('refuses the IPv4-translated loopback https://[::ffff:0:7f00:1]/', async () => {
    assert.equal(classifyAddress('::ffff:0:7f00:1'), 'reserved');
    assert.deepEqual(await resolveTarget('https://[::ffff:0:7f00:1]/', false), {
      ok: false,
      reason: 'reserved_address',
    });
    assert.deepEqual(
      await resolveTarget('https://[::ffff:0:7f00:1]/', true),
      { ok: false, reason: 'reserved_address' },
      'not in the sandbox either',
    );
  });

  it('refuses a Teredo address https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/', async () => {
    assert.deepEqual(await resolveTarget('https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/', false), {
      ok: false,
      reason: 'reserved_address',
    });
    // Teredo carries the obfuscated client IPv4 (here 192.0.2.45 xor ff): refused whatever it is.
    assert.equal(classifyAddress('2001:0:4136:e378:8000:63bf:f5ff:fffe'), 'reserved');
  });

  it('refuses the same ranges when a name resolves to them', async () => {
    const fake = (address: string) => async () => [{ address, family: 6 as const }];
    for (const address of ['::ffff:0:7f00:1', '2001::1', '2002:a00:1::1', '64:ff9b::7f00:1', 'fe80::1%eth0']) {
      const res = await resolveTarget('https://hooks.example/', false, fake(address));
      assert.equal(res.ok, false, address);
    }
  });

  it('accepts public addresses next to the special ranges', () => {
    const publicOnes = [
      '8.8.8.8',
      '1.1.1.1',
      '9.255.255.255',
      '11.0.0.0',
      '100.63.255.255',
      '100.128.0.0',
      '126.255.255.255',
      '128.0.0.0',
      '169.253.255.255',
      '169.255.0.0',
      '172.15.255.255',
      '172.32.0.0',
      '191.255.255.255',
      '192.0.1.0',
      '192.0.3.0',
      '192.88.98.255',
      '192.88.100.0',
      '192.167.255.255',
      '192.169.0.0',
      '198.17.255.255',
      '198.20.0.0',
      '198.51.99.255',
      '198.51.101.0',
      '203.0.112.255',
      '203.0.114.0',
      '223.255.255.255',
      '::ffff:8.8.8.8',
      '2606:4700::1111',
      '2001:200::1',
      '2001:4860:4860::8888',
      '2003::1',
      '2620:4f:7fff::1',
      '2620:4f:8001::1',
      '3ffe:ffff::1',
      '3fff:1000::1',
      '2a00:1450:4001:81b::200e',
    ];
    for (const address of publicOnes) {
      assert.equal(classifyAddress(address), 'public', address);
      assert.ok(addressAllowed(classifyAddress(address), false), address);
    }
  });

  it('lets the sandbox use loopback and private only, never the other special ranges', () => {
    assert.ok(addressAllowed(classifyAddress('127.0.0.1'), true));
    assert.ok(addressAllowed(classifyAddress('fd12::1'), true));
    for (const address of ['169.254.169.254', '::ffff:0:7f00:1', '2001::1', '192.0.2.1', 'ff02::1', '0.0.0.0']) {
      assert.ok(!addressAllowed(classifyAddress(address), true), address);
    }
  });

  it('still refuses the shapes it refused', () => {
    assert.deepEqual(checkUrlShape('http://example.com/x', false), { ok: false, reason: 'https_required' });
    assert.deepEqual(checkUrlShape('https://user:pw@example.com/', false), {
      ok: false,
      reason: 'credentials_not_allowed',
    });
  });
});
