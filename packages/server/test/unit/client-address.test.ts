import { describe, expect, it } from 'vitest';
import { clientAddressFrom, parseClientAddress } from '../../src/core/client-address.js';

describe('parseClientAddress: one spelling and one budget per address', () => {
  it.each([
    // IPv4, with and without a port.
    ['203.0.113.7', '203.0.113.7', '203.0.113.7'],
    ['203.0.113.7:51234', '203.0.113.7', '203.0.113.7'],
    [' 203.0.113.7 ', '203.0.113.7', '203.0.113.7'],
    // IPv4-mapped IPv6, in every spelling: the IPv4 address.
    ['::ffff:198.51.100.1', '198.51.100.1', '198.51.100.1'],
    ['::FFFF:198.51.100.1', '198.51.100.1', '198.51.100.1'],
    ['::ffff:c633:6401', '198.51.100.1', '198.51.100.1'],
    ['0:0:0:0:0:ffff:c633:6401', '198.51.100.1', '198.51.100.1'],
    ['0000:0000:0000:0000:0000:FFFF:C633:6401', '198.51.100.1', '198.51.100.1'],
    ['[::ffff:c633:6401]:443', '198.51.100.1', '198.51.100.1'],
    // IPv6: RFC 5952 spelling, counted by its /64.
    ['2001:db8:85a3:8d3:1319:8a2e:370:7348', '2001:db8:85a3:8d3:1319:8a2e:370:7348', '2001:db8:85a3:8d3::/64'],
    ['2001:DB8:85A3:08D3::1', '2001:db8:85a3:8d3::1', '2001:db8:85a3:8d3::/64'],
    ['[2001:db8:85a3:8d3::1]:8443', '2001:db8:85a3:8d3::1', '2001:db8:85a3:8d3::/64'],
    ['[2001:db8:85a3:8d3::1]', '2001:db8:85a3:8d3::1', '2001:db8:85a3:8d3::/64'],
    ['2001:0db8:0000:0000:ffff::', '2001:db8:0:0:ffff::', '2001:db8:0:0::/64'],
    ['2001:db8::', '2001:db8::', '2001:db8:0:0::/64'],
    ['::1', '::1', '0:0:0:0::/64'],
    ['fe80::1:2:3:4%eth0', 'fe80::1:2:3:4', 'fe80:0:0:0::/64'],
    // A zone ID (RFC 6874) in any spelling node:net accepts names no other network: dropped.
    ['fe80::1:2:3:4%a-b', 'fe80::1:2:3:4', 'fe80:0:0:0::/64'],
    ['fe80::1:2:3:4%a.b', 'fe80::1:2:3:4', 'fe80:0:0:0::/64'],
    ['[fe80::1:2:3:4%:]:80', 'fe80::1:2:3:4', 'fe80:0:0:0::/64'],
    ['::ffff:198.51.100.1%a-b', '198.51.100.1', '198.51.100.1'],
  ])('%s is %s, counted as %s', (hop, ip, bucket) => {
    expect(parseClientAddress(hop)).toEqual({ ip, bucket });
  });

  it.each([
    'not an address',
    'unknown',
    '',
    '127.1', // IPv4 in a shorthand notation: not the four-part decimal proxies write
    '0x7f000001',
    '203.0.113.7:port',
    '203.0.113.7:123456',
    '203.0.113.256',
    '[2001:db8::1',
    '[2001:db8::1]:x',
    '[203.0.113.7]x',
    'example.com:443',
    '2001:db8::g',
  ])('%j is not an address', (hop) => {
    expect(parseClientAddress(hop)).toBeUndefined();
  });

  it('puts every address of one /64 in one bucket, and neighbouring /64s in others', () => {
    const buckets = new Set(['2001:db8:1:2::1', '2001:db8:1:2:ffff:ffff:ffff:ffff', '2001:DB8:1:2:0:0:0:9', '[2001:db8:1:2::abcd]:80'].map((hop) => parseClientAddress(hop)?.bucket));
    expect(buckets).toEqual(new Set(['2001:db8:1:2::/64']));
    expect(parseClientAddress('2001:db8:1:3::1')?.bucket).not.toBe('2001:db8:1:2::/64');
  });
});

describe('clientAddressFrom: the right-most hop that is an address', () => {
  const peer = '10.0.0.7';
  it.each([
    ['the peer alone', [peer], '10.0.0.7'],
    ['the right-most untrusted hop', [peer, '203.0.113.50'], '203.0.113.50'],
    ['its port stripped', [peer, '203.0.113.50:40000'], '203.0.113.50'],
    ['a mapped spelling of it', [peer, '::ffff:cb00:7132'], '203.0.113.50'],
    ['a hop that is not an address: the proxy that wrote it', [peer, 'garbage'], '10.0.0.7'],
    ['an empty hop: the proxy that wrote it', [peer, ''], '10.0.0.7'],
    ['behind two proxies, a bad hop: the second proxy', [peer, '10.0.0.8', 'nonsense'], '10.0.0.8'],
    ['the peer written as a mapped address', ['::ffff:10.0.0.7'], '10.0.0.7'],
  ])('%s', (_name, hops, ip) => {
    expect(clientAddressFrom(hops).ip).toBe(ip);
  });

  it('a request with no address at all (a Unix socket) shares one bucket', () => {
    expect(clientAddressFrom([undefined])).toEqual({ ip: 'unknown', bucket: 'unknown' });
  });
});
