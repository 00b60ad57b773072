import type { EgressErrorCode } from '@toolhost/sandbox';

/** How one request ended, the `outcome` label of the egress metrics. */
export type EgressOutcome =
  'ok' | 'denied' | 'blocked_address' | 'timeout' | 'too_large' | 'error' | 'aborted' | 'limit';

export const OUTCOME_OF_CODE: Readonly<Record<EgressErrorCode, EgressOutcome>> = {
  NETWORK_DENIED: 'denied',
  NETWORK_BLOCKED_ADDRESS: 'blocked_address',
  NETWORK_TIMEOUT: 'timeout',
  NETWORK_TOO_LARGE: 'too_large',
  NETWORK_LIMIT: 'limit',
  NETWORK_ERROR: 'error',
  NETWORK_ABORTED: 'aborted',
};

/**
 * One request made or refused (a redirect hop is a request), as the egress log and audit rows keep it: never its
 * headers or bodies, and its query values masked.
 */
export interface EgressRecord {
  method: string;
  /** `host` or `host:port` (a port other than the scheme's); '' for a URL that could not be read. */
  host: string;
  /** The path, and the query with every value masked (`?symbol=***&key=***`). */
  path: string;
  /** The HTTP status; null when no answer came. */
  status: number | null;
  /** Response body bytes read. */
  bytes: number;
  ms: number;
  outcome: EgressOutcome;
  /** Why it failed, when it did. */
  code?: EgressErrorCode;
}

const MAX_PATH_LENGTH = 512;

/** The path of a URL for a record: query values masked, cut at 512 characters. */
export function recordedPath(url: URL): string {
  const query = [...url.searchParams.keys()].map((name) => `${name}=***`).join('&');
  const path = query.length > 0 ? `${url.pathname}?${query}` : url.pathname;
  return path.length > MAX_PATH_LENGTH ? `${path.slice(0, MAX_PATH_LENGTH)}…` : path;
}

/** The host of a URL for a record: with its port when that is not the scheme's, without a trailing dot. */
export function recordedHost(url: URL): string {
  const host = url.hostname.endsWith('.') ? url.hostname.slice(0, -1) : url.hostname;
  return url.port === '' ? host : `${host}:${url.port}`;
}
