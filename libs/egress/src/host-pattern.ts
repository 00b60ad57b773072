// Host patterns of a tool's `network.allow` and the operator's EGRESS_ALLOW / EGRESS_DENY: `api.example.com`,
// `*.example.com` (its subdomains only), an IP address (`203.0.113.7`, `[2001:db8::1]`), each with an optional
// `:port`. Hosts are normalised by the WHATWG URL parser, as request URLs are, so the two compare as equal strings.
import { parseIp } from './ip-address';

export interface HostPattern {
  /** Normalised host: lower-case, punycode, canonical IP form, no trailing dot; the suffix after `*.` for wildcards. */
  host: string;
  /** `*.host`: any subdomain of host, not host itself. */
  wildcard: boolean;
  /** The port it names; none: 80 and 443 (when allowing), any port (when denying). */
  port?: number;
  /** The pattern written back in normal form (`*.example.com:8443`). */
  text: string;
}

/** Ports a pattern without a port allows. */
export const DEFAULT_PORTS: readonly number[] = [80, 443];

const MAX_HOST_LENGTH = 253;
const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/** The host of a URL as patterns hold it: lower-case (the URL parser did that) and without a trailing dot. */
export function normalHost(hostname: string): string {
  return hostname.endsWith('.') ? hostname.slice(0, -1) : hostname;
}

/** A pattern, or why the text is not one. */
export function parseHostPattern(input: string): HostPattern | { error: string } {
  const text = input.trim().toLowerCase();
  if (text.length === 0) return { error: 'is empty' };
  if (/[/?#@\\\s]|:\/\//.test(text)) return { error: 'must be a host with an optional port, not a URL' };
  let host = text;
  let portText: string | undefined;
  const bracket = text.startsWith('[') ? text.indexOf(']') : -1;
  if (bracket >= 0) {
    host = text.slice(0, bracket + 1);
    const rest = text.slice(bracket + 1);
    if (rest !== '' && !rest.startsWith(':')) return { error: 'has text after the IPv6 address' };
    portText = rest === '' ? undefined : rest.slice(1);
  } else if (text.includes(':')) {
    const colon = text.lastIndexOf(':');
    host = text.slice(0, colon);
    portText = text.slice(colon + 1);
    if (host.includes(':')) return { error: 'an IPv6 address must be written in brackets ([2001:db8::1])' };
  }
  let port: number | undefined;
  if (portText !== undefined) {
    if (!/^\d{1,5}$/.test(portText) || Number(portText) < 1 || Number(portText) > 65_535) {
      return { error: 'has a port that is not 1 to 65535' };
    }
    port = Number(portText);
  }
  const wildcard = host.startsWith('*.');
  if (wildcard) host = host.slice(2);
  if (host.includes('*')) return { error: 'may use * only as its first label (*.example.com)' };
  const normal = normalizeHost(host);
  if ('error' in normal) return normal;
  if (wildcard && normal.ip) return { error: 'cannot put * in front of an IP address' };
  if (wildcard && !normal.host.includes('.')) return { error: 'must name at least two labels after *.' };
  const written = `${wildcard ? '*.' : ''}${normal.host}${port === undefined ? '' : `:${port}`}`;
  return { host: normal.host, wildcard, ...(port === undefined ? {} : { port }), text: written };
}

function normalizeHost(host: string): { host: string; ip: boolean } | { error: string } {
  if (host.length === 0) return { error: 'has no host' };
  let parsed: URL;
  try {
    parsed = new URL(`http://${host}/`);
  } catch {
    return { error: 'is not a valid host name' };
  }
  const hostname = normalHost(parsed.hostname);
  if (parseIp(hostname)) return { host: hostname, ip: true };
  if (hostname.length > MAX_HOST_LENGTH || !hostname.split('.').every((label) => LABEL.test(label))) {
    return { error: 'is not a valid host name' };
  }
  return { host: hostname, ip: false };
}

function hostMatches(pattern: HostPattern, host: string): boolean {
  return pattern.wildcard ? host.endsWith(`.${pattern.host}`) : host === pattern.host;
}

/** Whether an allow pattern lets a request reach host:port (host as normalHost gives it). */
export function allows(pattern: HostPattern, host: string, port: number): boolean {
  if (!hostMatches(pattern, host)) return false;
  return pattern.port === undefined ? DEFAULT_PORTS.includes(port) : pattern.port === port;
}

/** Whether a deny pattern refuses host:port: without a port it refuses every port. */
export function denies(pattern: HostPattern, host: string, port: number): boolean {
  return hostMatches(pattern, host) && (pattern.port === undefined || pattern.port === port);
}

/** Whether every host a pattern names is also named by `outer` (ports aside). */
function hostsWithin(inner: HostPattern, outer: HostPattern): boolean {
  if (!outer.wildcard) return !inner.wildcard && inner.host === outer.host;
  return inner.host.endsWith(`.${outer.host}`) || (inner.wildcard && inner.host === outer.host);
}

/** Whether every host:port `inner` allows, the allow pattern `outer` allows too. */
export function allowWithin(inner: HostPattern, outer: HostPattern): boolean {
  if (!hostsWithin(inner, outer)) return false;
  const innerPorts = inner.port === undefined ? DEFAULT_PORTS : [inner.port];
  const outerPorts = outer.port === undefined ? DEFAULT_PORTS : [outer.port];
  return innerPorts.every((port) => outerPorts.includes(port));
}

/** Whether the deny pattern refuses every host:port the allow pattern `inner` names. */
export function deniedWhole(inner: HostPattern, deny: HostPattern): boolean {
  if (!hostsWithin(inner, deny)) return false;
  if (deny.port === undefined) return true;
  const innerPorts = inner.port === undefined ? DEFAULT_PORTS : [inner.port];
  return innerPorts.every((port) => port === deny.port);
}
