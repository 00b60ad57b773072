import {
  allowWithin,
  allows,
  deniedWhole,
  denies,
  normalHost,
  parseHostPattern,
  type HostPattern,
} from './host-pattern';

/** The operator's outer policy (EGRESS_TOOL_HOSTS, EGRESS_ALLOW, EGRESS_DENY), parsed. */
export interface OperatorPolicy {
  /** Whether tools may declare hosts at all; off: no tool reaches the network. */
  toolHosts: boolean;
  /** Hosts tools may list and reach; empty: any public host. */
  allow: HostPattern[];
  /** Hosts no tool may reach, on any port unless the pattern names one. */
  deny: HostPattern[];
}

/** A problem with one entry of a tool's `network.allow`, for a 400 naming the host. */
export interface AllowListProblem {
  index: number;
  message: string;
}

/** The effective port of a URL: its own, else its scheme's. */
export function portOf(url: URL): number {
  if (url.port !== '') return Number(url.port);
  return url.protocol === 'https:' ? 443 : 80;
}

/**
 * Checks a tool's `network.allow` at save: each entry a host pattern, inside the operator's policy. Answers the
 * patterns in normal form, or a problem per bad entry.
 */
export function checkToolAllowList(
  entries: readonly string[],
  operator: OperatorPolicy,
): { patterns: HostPattern[]; problems: AllowListProblem[] } {
  const patterns: HostPattern[] = [];
  const problems: AllowListProblem[] = [];
  if (entries.length > 0 && !operator.toolHosts) {
    problems.push({ index: -1, message: 'cannot list hosts: this server lets no tool reach the network' });
    return { patterns, problems };
  }
  entries.forEach((entry, index) => {
    const parsed = parseHostPattern(entry);
    if ('error' in parsed) {
      problems.push({ index, message: `"${entry}" ${parsed.error}` });
      return;
    }
    if (operator.allow.length > 0 && !operator.allow.some((outer) => allowWithin(parsed, outer))) {
      problems.push({ index, message: `${parsed.text} is outside what this server allows tools to reach` });
      return;
    }
    const deny = operator.deny.find((pattern) => deniedWhole(parsed, pattern));
    if (deny) {
      problems.push({ index, message: `${parsed.text} is refused by this server (${deny.text})` });
      return;
    }
    patterns.push(parsed);
  });
  return { patterns, problems };
}

/**
 * What one tool may reach: the hosts it lists, within the operator's policy, checked again on every request (the
 * policy may have changed since the tool was saved).
 */
export class EgressPolicy {
  constructor(
    /** The tool's own list; empty: the tool has no network. */
    readonly tool: readonly HostPattern[],
    readonly operator: OperatorPolicy,
  ) {}

  /** A tool's stored `network.allow` (normal form already; an entry that no longer parses is skipped). */
  static forTool(allow: readonly string[] | undefined, operator: OperatorPolicy): EgressPolicy {
    const patterns = (allow ?? []).flatMap((entry) => {
      const parsed = parseHostPattern(entry);
      return 'error' in parsed ? [] : [parsed];
    });
    return new EgressPolicy(patterns, operator);
  }

  /** Whether the tool's own list names host:port of this URL. */
  toolLists(url: URL): boolean {
    const host = normalHost(url.hostname);
    const port = portOf(url);
    return this.tool.some((pattern) => allows(pattern, host, port));
  }

  /** Why a request to this URL is refused by policy, or undefined when it may go (the addresses are checked later). */
  refusal(url: URL): string | undefined {
    const host = normalHost(url.hostname);
    const port = portOf(url);
    const where = `${host}:${port}`;
    if (!this.operator.toolHosts) return `${where}: this server lets no tool reach the network`;
    if (this.tool.length === 0) return `${where}: the tool lists no hosts in network.allow`;
    if (!this.toolLists(url)) return `${where} is not in the tool's network.allow`;
    if (this.operator.allow.length > 0 && !this.operator.allow.some((pattern) => allows(pattern, host, port))) {
      return `${where} is outside what this server allows tools to reach`;
    }
    if (this.operator.deny.some((pattern) => denies(pattern, host, port))) return `${where} is refused by this server`;
    return undefined;
  }
}
