/**
 * Classifying IP addresses for `http_request`: only globally routable unicast addresses are
 * public. Loopback, private, link-local (cloud metadata at 169.254.169.254), shared, reserved,
 * documentation and multicast ranges are not — in IPv4, in IPv6, and in IPv6 forms that embed an
 * IPv4 address (IPv4-mapped `::ffff:a.b.c.d`, IPv4-compatible, NAT64, 6to4).
 */
import { isIP } from 'node:net';

/** [first address, prefix length] of the IPv4 ranges that are not public. */
const V4_BLOCKED: ReadonlyArray<readonly [string, number]> = [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
];

/** Parses dotted-quad IPv4 into a 32-bit number, or null. */
export function parseIPv4(text: string): number | null {
  const parts = text.split('.');
  if (parts.length !== 4) return null;
  let value = 0;
  for (const part of parts) {
    if (!/^\d{1,3}$/.test(part)) return null;
    const n = Number(part);
    if (n > 255) return null;
    value = value * 256 + n;
  }
  return value;
}

const V4_RANGES = V4_BLOCKED.map(([base, bits]) => {
  const start = parseIPv4(base) ?? 0;
  return { start, size: 2 ** (32 - bits) };
});

function isPublicV4(value: number): boolean {
  return !V4_RANGES.some((r) => value >= r.start && value < r.start + r.size);
}

/** Parses an IPv6 address (zone id stripped, embedded IPv4 allowed) into eight 16-bit groups. */
export function parseIPv6(text: string): number[] | null {
  let body = text.split('%', 1)[0] ?? '';
  const lastColon = body.lastIndexOf(':');
  const tail = body.slice(lastColon + 1);
  if (tail.includes('.')) {
    const v4 = parseIPv4(tail);
    if (v4 === null || lastColon < 0) return null;
    body = `${body.slice(0, lastColon + 1)}${Math.floor(v4 / 65536).toString(16)}:${(v4 % 65536).toString(16)}`;
  }
  const halves = body.split('::');
  if (halves.length > 2) return null;
  const parse = (s: string): number[] | null => {
    if (s === '') return [];
    const out: number[] = [];
    for (const g of s.split(':')) {
      if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return null;
      out.push(Number.parseInt(g, 16));
    }
    return out;
  };
  const head = parse(halves[0] ?? '');
  const rest = halves.length === 2 ? parse(halves[1] ?? '') : [];
  if (head === null || rest === null) return null;
  const total = head.length + rest.length;
  if (halves.length === 2) {
    if (total > 7) return null;
    return [...head, ...new Array<number>(8 - total).fill(0), ...rest];
  }
  return total === 8 ? head : null;
}

function embeddedV4(hi: number, lo: number): number {
  return hi * 65536 + lo;
}

function isPublicV6(g: readonly number[]): boolean {
  const [a = 0, b = 0, c = 0, d = 0, e = 0, f = 0, h7 = 0, h8 = 0] = g;
  const zeroTo = (n: number): boolean => g.slice(0, n).every((x) => x === 0);
  if (zeroTo(5) && f === 0xffff) return isPublicV4(embeddedV4(h7, h8)); // ::ffff:a.b.c.d
  if (zeroTo(6)) return false; // ::, ::1, IPv4-compatible (deprecated)
  if (a === 0x64 && b === 0xff9b && c === 0 && d === 0 && e === 0 && f === 0) {
    return isPublicV4(embeddedV4(h7, h8)); // NAT64 64:ff9b::/96
  }
  if (a === 0x64 && b === 0xff9b && c === 1) return false; // local-use NAT64 64:ff9b:1::/48
  if (a === 0x100 && b === 0 && c === 0 && d === 0) return false; // discard 100::/64
  if (a === 0x2001 && b < 0x200) return false; // IETF protocol assignments incl. Teredo 2001::/23
  if (a === 0x2001 && b === 0xdb8) return false; // documentation
  if (a === 0x2002) return isPublicV4(embeddedV4(b, c)); // 6to4
  if ((a & 0xfe00) === 0xfc00) return false; // unique local fc00::/7
  if ((a & 0xffc0) === 0xfe80) return false; // link-local fe80::/10
  if ((a & 0xffc0) === 0xfec0) return false; // site-local fec0::/10
  if ((a & 0xff00) === 0xff00) return false; // multicast
  return true;
}

/**
 * Whether `address` (an IP literal, IPv6 without brackets) is a public unicast address. Anything
 * that does not parse is not public.
 */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address.split('%', 1)[0] ?? '');
  if (family === 4) {
    const v4 = parseIPv4(address);
    return v4 !== null && isPublicV4(v4);
  }
  if (family === 6) {
    if (address.includes('%')) return false;
    const groups = parseIPv6(address);
    return groups !== null && isPublicV6(groups);
  }
  return false;
}
