import { classifyAddress, formatIp, inCidr, parseCidr, parseIp } from './ip-address';

const verdictOf = (text: string) => {
  const bytes = parseIp(text);
  if (!bytes) throw new Error(`not an address: ${text}`);
  return classifyAddress(bytes);
};

describe('classifyAddress', () => {
  // [address, range it is refused as, or 'public']
  const table: [string, string][] = [
    // IPv4
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'this-network'],
    ['10.0.0.1', 'private'],
    ['10.255.255.255', 'private'],
    ['100.64.0.1', 'shared (CGNAT)'],
    ['100.127.255.254', 'shared (CGNAT)'],
    ['100.100.100.200', 'cloud metadata'],
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['169.254.0.1', 'link-local'],
    ['169.254.169.254', 'cloud metadata'],
    ['168.63.129.16', 'cloud metadata'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.0.0.8', 'protocol assignments'],
    ['192.0.2.1', 'documentation'],
    ['192.88.99.1', 'reserved'],
    ['192.168.1.1', 'private'],
    ['198.18.0.1', 'benchmarking'],
    ['198.19.255.255', 'benchmarking'],
    ['198.51.100.7', 'documentation'],
    ['203.0.113.9', 'documentation'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'broadcast'],
    ['8.8.8.8', 'public'],
    ['1.1.1.1', 'public'],
    ['100.63.255.255', 'public'],
    ['100.128.0.0', 'public'],
    ['172.15.255.255', 'public'],
    ['172.32.0.0', 'public'],
    ['169.253.255.255', 'public'],
    ['192.169.0.1', 'public'],
    ['198.20.0.1', 'public'],
    // IPv6
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['febf::1', 'link-local'],
    ['fec0::1', 'site-local'],
    ['fc00::1', 'unique-local'],
    ['fd12:3456::1', 'unique-local'],
    ['fd00:ec2::254', 'cloud metadata'],
    ['ff02::1', 'multicast'],
    ['ff0e::1', 'multicast'],
    ['100::1', 'discard-only'],
    ['2001:db8::1', 'documentation'],
    ['3fff::1', 'documentation'],
    ['2001:2::1', 'benchmarking'],
    ['2001:10::1', 'protocol assignments'],
    ['64:ff9b:1::1', 'local NAT64'],
    ['::ffff:0:0:1', 'not global unicast'],
    ['4000::1', 'not global unicast'],
    ['2606:4700:4700::1111', 'public'],
    ['2a00:1450:4001::200e', 'public'],
    // IPv6 forms that embed an IPv4 address are judged by it
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:10.1.2.3', 'private'],
    ['::ffff:169.254.169.254', 'cloud metadata'],
    ['::ffff:8.8.8.8', 'public'],
    ['::127.0.0.1', 'loopback'],
    ['::192.168.0.1', 'private'],
    ['64:ff9b::127.0.0.1', 'loopback'],
    ['64:ff9b::a00:1', 'private'],
    ['64:ff9b::169.254.169.254', 'cloud metadata'],
    ['64:ff9b::8.8.8.8', 'public'],
    ['2002:7f00:1::1', 'loopback'], // 6to4 of 127.0.0.1
    ['2002:a9fe:a9fe::1', 'cloud metadata'], // 6to4 of 169.254.169.254
    ['2002:808:808::1', 'public'], // 6to4 of 8.8.8.8
    // Teredo: server 65.54.227.120, client 127.0.0.1 (bits inverted: 80ff:fffe)
    ['2001:0:4136:e378:8000:63bf:80ff:fffe', 'loopback'],
    // Teredo: server 10.0.0.1 (private)
    ['2001:0:a00:1:8000:63bf:3fff:fdd2', 'private'],
    // Teredo: server 65.54.227.120, client 192.0.2.45 → documentation; client 8.8.8.8 → public
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'documentation'],
    ['2001:0:4136:e378:8000:63bf:f7f7:f7f7', 'public'],
  ];

  it.each(table)('%s is %s', (address, expected) => {
    const verdict = verdictOf(address);
    expect(verdict.public ? 'public' : verdict.range).toBe(expected);
  });

  it('names the embedded IPv4 address it judged an IPv6 address by', () => {
    expect(verdictOf('::ffff:127.0.0.1')).toEqual({ public: false, range: 'loopback', embedded: '127.0.0.1' });
    expect(verdictOf('64:ff9b::a9fe:a9fe')).toEqual({
      public: false,
      range: 'cloud metadata',
      embedded: '169.254.169.254',
    });
  });
});

describe('parseIp', () => {
  it('reads IPv4, IPv6 (compressed, bracketed, with a zone or a dotted tail) and nothing else', () => {
    expect(parseIp('127.0.0.1')).toEqual(Uint8Array.from([127, 0, 0, 1]));
    expect(formatIp(parseIp('[::ffff:127.0.0.1]') ?? new Uint8Array())).toBe('0:0:0:0:0:ffff:7f00:1');
    expect(formatIp(parseIp('2001:db8::8:800:200c:417a') ?? new Uint8Array())).toBe('2001:db8:0:0:8:800:200c:417a');
    expect(parseIp('fe80::1%eth0')?.length).toBe(16);
    for (const text of ['localhost', '0x7f000001', '2130706433', '127.1', '1.2.3.4.5', '', '::g', '[::1']) {
      expect(parseIp(text)).toBeUndefined();
    }
  });
});

describe('CIDR ranges', () => {
  it('matches by prefix, one address without a prefix, and never across families', () => {
    const loopback = parseCidr('127.0.0.1/32');
    const ten = parseCidr('10.0.0.0/8');
    const odd = parseCidr('172.16.0.0/12');
    const ula = parseCidr('fd00::/8');
    const one = parseCidr('127.0.0.1');
    if (!loopback || !ten || !odd || !ula || !one) throw new Error('ranges did not parse');
    const ip = (text: string): Uint8Array => parseIp(text) ?? new Uint8Array();
    expect(inCidr(ip('127.0.0.1'), loopback)).toBe(true);
    expect(inCidr(ip('127.0.0.2'), loopback)).toBe(false);
    expect(inCidr(ip('127.0.0.1'), one)).toBe(true);
    expect(inCidr(ip('10.200.1.1'), ten)).toBe(true);
    expect(inCidr(ip('11.0.0.1'), ten)).toBe(false);
    expect(inCidr(ip('172.31.0.1'), odd)).toBe(true);
    expect(inCidr(ip('172.32.0.1'), odd)).toBe(false);
    expect(inCidr(ip('fdab::1'), ula)).toBe(true);
    expect(inCidr(ip('fe80::1'), ula)).toBe(false);
    expect(inCidr(ip('::ffff:127.0.0.1'), loopback)).toBe(false);
  });

  it('refuses what is not a range', () => {
    for (const text of ['10.0.0.0/33', '::/129', '10.0.0.0/8/8', 'localhost/8', '10.0.0.0/x', 'fe80::1%eth0/64']) {
      expect(parseCidr(text)).toBeUndefined();
    }
  });
});
