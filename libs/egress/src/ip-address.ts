// IP addresses as bytes, CIDR ranges, and which addresses a tool's request may connect to. Written here rather than
// with net.BlockList: the rules need the IPv4 address embedded in IPv6 forms (mapped, compatible, NAT64, 6to4,
// Teredo) checked as IPv4, and a verdict that names the range an address fell in.
import { isIPv4, isIPv6 } from 'node:net';

/** The ranges a request may not connect to (unless the operator opens them with EGRESS_ALLOW_CIDRS). */
export type BlockedRange =
  | 'unspecified'
  | 'this-network'
  | 'loopback'
  | 'private'
  | 'shared (CGNAT)'
  | 'link-local'
  | 'cloud metadata'
  | 'multicast'
  | 'broadcast'
  | 'documentation'
  | 'benchmarking'
  | 'protocol assignments'
  | 'reserved'
  | 'unique-local'
  | 'site-local'
  | 'discard-only'
  | 'local NAT64'
  | 'not global unicast';

export type AddressVerdict =
  | { public: true }
  | {
      public: false;
      range: BlockedRange;
      /** The IPv4 address that was checked in place of an IPv6 address embedding it. */
      embedded?: string;
    };

/** 4 bytes for IPv4, 16 for IPv6; undefined for anything that is not an IP address (a zone id is dropped). */
export function parseIp(text: string): Uint8Array | undefined {
  let bare = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  const zone = bare.indexOf('%');
  if (zone >= 0) bare = bare.slice(0, zone);
  if (isIPv4(bare)) return Uint8Array.from(bare.split('.').map(Number));
  if (isIPv6(bare)) return parseIpv6(bare);
  return undefined;
}

function parseIpv6(text: string): Uint8Array {
  const bytes = new Uint8Array(16);
  const groupsOf = (part: string): number[] => {
    if (part === '') return [];
    const groups: number[] = [];
    for (const piece of part.split(':')) {
      if (piece.includes('.')) {
        const [a = 0, b = 0, c = 0, d = 0] = piece.split('.').map(Number);
        groups.push((a << 8) | b, (c << 8) | d);
      } else {
        groups.push(parseInt(piece, 16));
      }
    }
    return groups;
  };
  const gap = text.indexOf('::');
  const head = groupsOf(gap >= 0 ? text.slice(0, gap) : text);
  const tail = gap >= 0 ? groupsOf(text.slice(gap + 2)) : [];
  const groups = [...head, ...new Array<number>(8 - head.length - tail.length).fill(0), ...tail];
  groups.forEach((group, index) => {
    bytes[index * 2] = group >> 8;
    bytes[index * 2 + 1] = group & 0xff;
  });
  return bytes;
}

export function formatIp(bytes: Uint8Array): string {
  if (bytes.length === 4) return bytes.join('.');
  const groups: string[] = [];
  for (let index = 0; index < 16; index += 2)
    groups.push((((bytes[index] ?? 0) << 8) | (bytes[index + 1] ?? 0)).toString(16));
  return groups.join(':');
}

/** An address range: the prefix bytes and its length in bits. */
export interface Cidr {
  bytes: Uint8Array;
  bits: number;
}

/** `10.0.0.0/8`, `fd00::/8`, or one address (`127.0.0.1` = /32). */
export function parseCidr(text: string): Cidr | undefined {
  const [address = '', prefix, extra] = text.trim().split('/');
  if (extra !== undefined) return undefined;
  const bytes = parseIp(address);
  if (!bytes || address.includes('%')) return undefined;
  const max = bytes.length * 8;
  if (prefix === undefined) return { bytes, bits: max };
  if (!/^\d{1,3}$/.test(prefix) || Number(prefix) > max) return undefined;
  return { bytes, bits: Number(prefix) };
}

export function inCidr(address: Uint8Array, cidr: Cidr): boolean {
  if (address.length !== cidr.bytes.length) return false;
  let bits = cidr.bits;
  for (let index = 0; bits > 0; index++, bits -= 8) {
    const mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
    if (((address[index] ?? 0) & mask) !== ((cidr.bytes[index] ?? 0) & mask)) return false;
  }
  return true;
}

const cidr = (text: string): Cidr => {
  const parsed = parseCidr(text);
  if (!parsed) throw new Error(`bad built-in range ${text}`);
  return parsed;
};

// First match wins: the narrow ranges (metadata endpoints) come before the ranges that contain them.
const IPV4_BLOCKED: [Cidr, BlockedRange][] = [
  [cidr('169.254.169.254/32'), 'cloud metadata'], // AWS, GCP, Azure, OCI, DigitalOcean…
  [cidr('100.100.100.200/32'), 'cloud metadata'], // Alibaba Cloud
  [cidr('168.63.129.16/32'), 'cloud metadata'], // Azure WireServer (a public address, answering only inside Azure)
  [cidr('0.0.0.0/32'), 'unspecified'],
  [cidr('0.0.0.0/8'), 'this-network'],
  [cidr('10.0.0.0/8'), 'private'],
  [cidr('100.64.0.0/10'), 'shared (CGNAT)'],
  [cidr('127.0.0.0/8'), 'loopback'],
  [cidr('169.254.0.0/16'), 'link-local'],
  [cidr('172.16.0.0/12'), 'private'],
  [cidr('192.0.0.0/24'), 'protocol assignments'],
  [cidr('192.0.2.0/24'), 'documentation'],
  [cidr('192.88.99.0/24'), 'reserved'], // the retired 6to4 relay anycast
  [cidr('192.168.0.0/16'), 'private'],
  [cidr('198.18.0.0/15'), 'benchmarking'],
  [cidr('198.51.100.0/24'), 'documentation'],
  [cidr('203.0.113.0/24'), 'documentation'],
  [cidr('224.0.0.0/4'), 'multicast'],
  [cidr('255.255.255.255/32'), 'broadcast'],
  [cidr('240.0.0.0/4'), 'reserved'],
];

const IPV6_BLOCKED: [Cidr, BlockedRange][] = [
  [cidr('fd00:ec2::254/128'), 'cloud metadata'], // AWS over IPv6
  [cidr('::/128'), 'unspecified'],
  [cidr('::1/128'), 'loopback'],
  [cidr('64:ff9b:1::/48'), 'local NAT64'],
  [cidr('100::/64'), 'discard-only'],
  [cidr('2001:db8::/32'), 'documentation'],
  [cidr('3fff::/20'), 'documentation'],
  [cidr('2001:2::/48'), 'benchmarking'],
  [cidr('2001::/23'), 'protocol assignments'], // Teredo (2001::/32) is checked before this
  [cidr('fc00::/7'), 'unique-local'],
  [cidr('fe80::/10'), 'link-local'],
  [cidr('fec0::/10'), 'site-local'],
  [cidr('ff00::/8'), 'multicast'],
];

const GLOBAL_UNICAST = cidr('2000::/3');
const MAPPED = cidr('::ffff:0:0/96');
const COMPATIBLE = cidr('::/96');
const NAT64 = cidr('64:ff9b::/96');
const SIX_TO_FOUR = cidr('2002::/16');
const TEREDO = cidr('2001::/32');

/** The IPv4 address an IPv4-mapped IPv6 address stands for (`::ffff:127.0.0.1` is 127.0.0.1); else undefined. */
export function mappedIpv4(bytes: Uint8Array): Uint8Array | undefined {
  return bytes.length === 16 && inCidr(bytes, MAPPED) ? bytes.slice(12) : undefined;
}

function classifyIpv4(bytes: Uint8Array): AddressVerdict {
  for (const [range, name] of IPV4_BLOCKED) if (inCidr(bytes, range)) return { public: false, range: name };
  return { public: true };
}

/** The verdict on IPv4 addresses embedded in an IPv6 one: blocked when any of them is. */
function embeddedVerdict(embedded: Uint8Array[]): AddressVerdict {
  for (const address of embedded) {
    const verdict = classifyIpv4(address);
    if (!verdict.public) return { ...verdict, embedded: formatIp(address) };
  }
  return { public: true };
}

/**
 * Whether a request may connect to this address: public unicast only. IPv6 forms that carry an IPv4 address
 * (IPv4-mapped and -compatible, NAT64 64:ff9b::/96, 6to4, Teredo's server and client) are judged by that address.
 * Outside 2000::/3 no IPv6 address is global unicast.
 */
export function classifyAddress(bytes: Uint8Array): AddressVerdict {
  if (bytes.length === 4) return classifyIpv4(bytes);
  const mapped = mappedIpv4(bytes);
  if (mapped) return embeddedVerdict([mapped]);
  if (inCidr(bytes, TEREDO)) {
    // The server's address in bits 32-63, the client's (bits inverted) in the last 32.
    const client = bytes.slice(12).map((byte) => byte ^ 0xff);
    return embeddedVerdict([bytes.slice(4, 8), client]);
  }
  // Before the embedding ranges: :: and ::1 lie inside the IPv4-compatible ::/96.
  for (const [range, name] of IPV6_BLOCKED) if (inCidr(bytes, range)) return { public: false, range: name };
  if (inCidr(bytes, COMPATIBLE) || inCidr(bytes, NAT64)) return embeddedVerdict([bytes.slice(12)]);
  if (inCidr(bytes, SIX_TO_FOUR)) return embeddedVerdict([bytes.slice(2, 6)]);
  if (!inCidr(bytes, GLOBAL_UNICAST)) return { public: false, range: 'not global unicast' };
  return { public: true };
}
