// The operator's egress settings: the policy part and the caps are read by the registry (to check a tool's `network`
// at save) and the worker (again at run time); the client's own settings by the worker alone. Each service spreads
// these into its env schema.
import { ConfigError, type EnvProperty } from '@toolhost/config';
import type { NetworkLimitCaps } from '@toolhost/contracts';
import { parseHostPattern, type HostPattern } from './host-pattern';
import type { OperatorPolicy } from './egress-policy';
import { parseCidr, type Cidr } from './ip-address';

export const egressPolicyEnvProperties = {
  EGRESS_TOOL_HOSTS: {
    type: 'string',
    enum: ['on', 'off'],
    default: 'on',
    description: "whether tools may list hosts in network.allow at all (off: no tool's fetch reaches the network)",
  },
  EGRESS_ALLOW: {
    type: 'string',
    description:
      'comma-separated host patterns tools may list and reach (api.example.com, *.example.com, host:8443); unset: any public host',
  },
  EGRESS_DENY: {
    type: 'string',
    description: 'comma-separated host patterns no tool may reach (every port unless the pattern names one)',
  },
} as const satisfies Record<string, EnvProperty>;

// The caps of every tool's fetch: the worker applies them, the registry refuses a tool's own network limits above them.
export const egressLimitEnvProperties = {
  EGRESS_MAX_REQUESTS_PER_INVOCATION: {
    type: 'integer',
    default: 50,
    minimum: 0,
    description:
      'fetch requests per invocation tree (each redirect hop is one), a budget of their own beside ctx.tools',
  },
  EGRESS_MAX_CONCURRENT: {
    type: 'integer',
    default: 10,
    minimum: 1,
    description: 'fetch requests of one invocation tree in flight at once; more wait for a slot, within their time',
  },
  EGRESS_MAX_RESPONSE_BYTES: {
    type: 'integer',
    default: 5 * 1024 * 1024,
    minimum: 1,
    description: 'largest response body a fetch reads; a longer one is cut and fails NETWORK_TOO_LARGE',
  },
  EGRESS_TIMEOUT_MS: {
    type: 'integer',
    default: 10_000,
    minimum: 1,
    description:
      "time of one fetch, redirects and waiting for a slot included, never past the invocation's wall clock (NETWORK_TIMEOUT)",
  },
} as const satisfies Record<string, EnvProperty>;

export const egressClientEnvProperties = {
  ...egressLimitEnvProperties,
  EGRESS_ALLOW_CIDRS: {
    type: 'string',
    description:
      'comma-separated address ranges a tool request may connect to although they are not public (10.0.0.0/8, 127.0.0.1/32); the host must still be allowed',
  },
  EGRESS_MAX_REQUEST_BYTES: {
    type: 'integer',
    default: 1024 * 1024,
    minimum: 0,
    description: 'largest request body a fetch may send (NETWORK_TOO_LARGE)',
  },
  EGRESS_METRIC_HOSTS: {
    type: 'string',
    description:
      'comma-separated hosts that get their own `host` label on the egress metrics (others: "other"); unset: no host label',
  },
} as const satisfies Record<string, EnvProperty>;

export interface EgressPolicyConfig {
  EGRESS_TOOL_HOSTS: 'on' | 'off';
  EGRESS_ALLOW?: string;
  EGRESS_DENY?: string;
}

export interface EgressLimitConfig {
  EGRESS_MAX_REQUESTS_PER_INVOCATION: number;
  EGRESS_MAX_CONCURRENT: number;
  EGRESS_MAX_RESPONSE_BYTES: number;
  EGRESS_TIMEOUT_MS: number;
}

/** The caps a tool's own `network` limits must stay within, from the EGRESS_* settings. */
export function networkLimitCapsOf(config: Readonly<EgressLimitConfig>): NetworkLimitCaps {
  return {
    maxRequests: config.EGRESS_MAX_REQUESTS_PER_INVOCATION,
    maxConcurrent: config.EGRESS_MAX_CONCURRENT,
    maxResponseBytes: config.EGRESS_MAX_RESPONSE_BYTES,
    timeoutMs: config.EGRESS_TIMEOUT_MS,
  };
}

export interface EgressClientConfig extends EgressLimitConfig {
  EGRESS_ALLOW_CIDRS?: string;
  EGRESS_MAX_REQUEST_BYTES: number;
  EGRESS_METRIC_HOSTS?: string;
}

const listOf = (text: string | undefined): string[] =>
  (text ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry.length > 0);

function patternsOf(name: string, text: string | undefined, problems: string[]): HostPattern[] {
  return listOf(text).flatMap((entry) => {
    const parsed = parseHostPattern(entry);
    if (!('error' in parsed)) return [parsed];
    problems.push(`${name}: "${entry}" ${parsed.error}`);
    return [];
  });
}

/** The operator policy; throws ConfigError naming every bad pattern. */
export function operatorPolicyOf(config: Readonly<EgressPolicyConfig>): OperatorPolicy {
  const problems: string[] = [];
  const allow = patternsOf('EGRESS_ALLOW', config.EGRESS_ALLOW, problems);
  const deny = patternsOf('EGRESS_DENY', config.EGRESS_DENY, problems);
  if (problems.length > 0) throw new ConfigError(problems);
  return { toolHosts: config.EGRESS_TOOL_HOSTS === 'on', allow, deny };
}

/** EGRESS_ALLOW_CIDRS parsed; throws ConfigError naming every bad range. */
export function allowCidrsOf(config: Readonly<Pick<EgressClientConfig, 'EGRESS_ALLOW_CIDRS'>>): Cidr[] {
  const problems: string[] = [];
  const ranges = listOf(config.EGRESS_ALLOW_CIDRS).flatMap((entry) => {
    const parsed = parseCidr(entry);
    if (parsed) return [parsed];
    problems.push(`EGRESS_ALLOW_CIDRS: "${entry}" is not an address range (10.0.0.0/8, fd00::/8, 127.0.0.1)`);
    return [];
  });
  if (problems.length > 0) throw new ConfigError(problems);
  return ranges;
}

/** EGRESS_METRIC_HOSTS as normal host names (the URL parser's form, no trailing dot). */
export function metricHostsOf(config: Readonly<Pick<EgressClientConfig, 'EGRESS_METRIC_HOSTS'>>): string[] {
  const problems: string[] = [];
  const hosts = listOf(config.EGRESS_METRIC_HOSTS).flatMap((entry) => {
    const parsed = parseHostPattern(entry);
    if (!('error' in parsed) && !parsed.wildcard && parsed.port === undefined) return [parsed.host];
    problems.push(`EGRESS_METRIC_HOSTS: "${entry}" is not a host name`);
    return [];
  });
  if (problems.length > 0) throw new ConfigError(problems);
  return hosts;
}

/** Every egress setting checked at boot, so a bad one stops the service with the others' problems listed. */
export function checkEgressSettings(config: Readonly<EgressPolicyConfig & Partial<EgressClientConfig>>): string[] {
  const problems: string[] = [];
  for (const check of [() => operatorPolicyOf(config), () => allowCidrsOf(config), () => metricHostsOf(config)]) {
    try {
      check();
    } catch (error) {
      if (error instanceof ConfigError) problems.push(...error.problems);
      else throw error;
    }
  }
  return problems;
}
