import { lookup } from 'node:dns/promises';
import type { Readable } from 'node:stream';
import type { IncomingHttpHeaders } from 'node:http';
import { EgressError, type EgressRequest, type EgressResponse } from '@toolhost/sandbox';
import { buildConnector, Pool } from 'undici';
import type { EgressBudget } from './egress-budget';
import type { EgressPolicy } from './egress-policy';
import { OUTCOME_OF_CODE, recordedHost, recordedPath, type EgressRecord } from './egress-record';
import { classifyAddress, formatIp, inCidr, mappedIpv4, parseIp, type Cidr } from './ip-address';
import { pinnedConnector } from './pinned-connector';

/** Resolves a host name to every address it has (as `dns.promises.lookup(host, {all: true})`). */
export type Resolver = (hostname: string) => Promise<{ address: string; family: number }[]>;

export const systemResolver: Resolver = (hostname) => lookup(hostname, { all: true });

export const MAX_REDIRECTS = 5;

/** What the code may ask about redirects (`fetch`'s `redirect` option); `manual` answers a 3xx as it is. */
export type RedirectMode = NonNullable<EgressRequest['redirect']>;

/** What the client fetches: the sandbox's request as it is. */
export type EgressFetchRequest = EgressRequest;

export interface EgressClientOptions {
  maxResponseBytes: number;
  maxRequestBytes: number;
  /** Time of one fetch, redirects and the wait for a slot included. */
  timeoutMs: number;
  /** Ranges opened although they are not public (EGRESS_ALLOW_CIDRS). */
  allowCidrs?: readonly Cidr[];
  resolver?: Resolver;
  /** Called for every request made or refused (metrics). */
  observe?: (record: EgressRecord) => void;
  /** Extra trust anchors for TLS (tests); the system's are used as well only when unset. */
  ca?: string | Buffer;
}

/** What one fetch runs under: the tool's policy, the invocation's signal, deadline and budget, the tool's secrets. */
export interface EgressFetchContext {
  policy: EgressPolicy;
  /** Aborts the fetch (the code's AbortSignal, the run's end). */
  signal: AbortSignal;
  /** Epoch ms the invocation's wall clock ends at: no request outlives it. */
  deadline: number;
  budget: EgressBudget;
  /** The tool's secret values: a request carrying one may go only to a host the tool lists. */
  secrets?: readonly string[];
  /** The tool's own caps, below the client's: the largest body one request reads, and its time. */
  maxResponseBytes?: number;
  timeoutMs?: number;
  /** Called for every request made or refused (the audit row and log line). */
  record?: (record: EgressRecord) => void;
}

interface HopRequest {
  method: string;
  headers: [string, string][];
  body: Uint8Array | undefined;
}

interface HopAnswer {
  url: URL;
  status: number;
  statusText: string;
  headers: [string, string][];
  body: Uint8Array;
}

// Set by the host, never by the code (fetch's forbidden request headers, those the host must own): the connection,
// the framing, the target, and the encoding of the answer (bodies are passed on as they arrive, never decoded).
const OWN_HEADERS = new Set([
  'host',
  'connection',
  'keep-alive',
  'content-length',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'expect',
  'accept-encoding',
  'accept-charset',
]);
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const BAD_VALUE = /[\0\r\n]/;
const FORBIDDEN_METHODS = new Set(['CONNECT', 'TRACE', 'TRACK']);
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
// Dropped when a redirect leaves the origin, as fetch does (plus any header carrying a secret of the tool).
const CREDENTIAL_HEADERS = new Set(['authorization', 'proxy-authorization', 'cookie']);
const BODY_HEADERS = new Set(['content-type', 'content-encoding', 'content-language', 'content-location']);
const MIN_SECRET_LENGTH = 4;
const MAX_POOLS = 256;

/**
 * The host side of tool code's `fetch`: an HTTP client that reaches only what the tool's policy allows, and only
 * public addresses. Every hop (redirects are followed here, at most 5) is checked the same way: http(s) only, no
 * credentials in the URL, the tool's `network.allow` within the operator's policy, then every address the name
 * resolves to must be public (or in EGRESS_ALLOW_CIDRS), and the connection goes to the address that was checked,
 * with TLS verified for the host name. One instance per process; its connections are kept per (origin, address).
 */
export class EgressClient {
  private readonly connector: buildConnector.connector;
  private readonly pools = new Map<string, Pool>();
  private readonly resolver: Resolver;

  constructor(private readonly options: EgressClientOptions) {
    this.resolver = options.resolver ?? systemResolver;
    this.connector = buildConnector({
      timeout: options.timeoutMs,
      ...(options.ca === undefined ? {} : { ca: options.ca }),
    });
  }

  /** Makes the request; rejects with an EgressError (its `code` says why). */
  async fetch(request: EgressFetchRequest, ctx: EgressFetchContext): Promise<EgressResponse> {
    const controller = new AbortController();
    const timeoutMs = Math.min(
      this.options.timeoutMs,
      ctx.timeoutMs ?? Infinity,
      request.timeoutMs ?? Infinity,
      ctx.deadline - Date.now(),
    );
    const timeout = new EgressError(
      'NETWORK_TIMEOUT',
      `no complete answer within ${Math.max(0, Math.round(timeoutMs))} ms`,
    );
    const onAbort = (): void => controller.abort(new EgressError('NETWORK_ABORTED', 'the request was aborted'));
    if (ctx.signal.aborted) onAbort();
    else ctx.signal.addEventListener('abort', onAbort, { once: true });
    if (timeoutMs <= 0) controller.abort(timeout);
    const timer = setTimeout(() => controller.abort(timeout), Math.max(0, timeoutMs));
    const held: { release?: () => void } = {};
    try {
      return await this.follow(request, ctx, controller.signal, held);
    } finally {
      clearTimeout(timer);
      ctx.signal.removeEventListener('abort', onAbort);
      held.release?.();
    }
  }

  /** Closes every kept connection. */
  async close(): Promise<void> {
    const pools = [...this.pools.values()];
    this.pools.clear();
    await Promise.allSettled(pools.map((pool) => pool.destroy()));
  }

  private async follow(
    request: EgressFetchRequest,
    ctx: EgressFetchContext,
    signal: AbortSignal,
    held: { release?: () => void },
  ): Promise<EgressResponse> {
    const mode = request.redirect ?? 'follow';
    let target: string | URL = request.url;
    let hop: HopRequest = { method: request.method, headers: request.headers, body: request.body };
    for (let redirects = 0; ; redirects++) {
      const answer = await this.hop(target, hop, ctx, signal, held);
      const location = answer.headers.find(([name]) => name === 'location')?.[1];
      if (mode === 'manual' || !REDIRECTS.has(answer.status) || location === undefined) {
        return { ...answer, url: answer.url.href, redirected: redirects > 0 };
      }
      if (mode === 'error') {
        throw new EgressError(
          'NETWORK_ERROR',
          `${answer.url.host} redirected (${answer.status}) and redirect is 'error'`,
        );
      }
      if (redirects >= MAX_REDIRECTS) throw new EgressError('NETWORK_LIMIT', `more than ${MAX_REDIRECTS} redirects`);
      let next: URL;
      try {
        next = new URL(location, answer.url);
      } catch {
        throw new EgressError('NETWORK_ERROR', `${answer.url.host} redirected to a URL that cannot be read`);
      }
      hop = this.redirected(hop, answer, next, ctx.secrets ?? []);
      target = next;
    }
  }

  /** The request of the next hop, as fetch makes it: the method and body a status keeps, credentials left behind. */
  private redirected(hop: HopRequest, answer: HopAnswer, next: URL, secrets: readonly string[]): HopRequest {
    let { method, headers, body } = hop;
    const toGet = answer.status === 303 ? method !== 'HEAD' : [301, 302].includes(answer.status) && method === 'POST';
    if (toGet) {
      method = 'GET';
      body = undefined;
      headers = headers.filter(([name]) => !BODY_HEADERS.has(name));
    }
    if (next.origin !== answer.url.origin) {
      headers = headers.filter(
        ([name, value]) => !CREDENTIAL_HEADERS.has(name) && !secrets.some((secret) => carries(value, secret)),
      );
    }
    return { method, headers, body };
  }

  /** One request: checked, made, and its answer read within the cap. Records it however it ends. */
  private async hop(
    target: string | URL,
    hop: HopRequest,
    ctx: EgressFetchContext,
    signal: AbortSignal,
    held: { release?: () => void },
  ): Promise<HopAnswer> {
    const started = performance.now();
    let url: URL | undefined;
    let status: number | null = null;
    let bytes = 0;
    const record = (outcome: Pick<EgressRecord, 'outcome' | 'code'>): void => {
      const entry: EgressRecord = {
        method: hop.method,
        host: url ? recordedHost(url) : '',
        path: url ? recordedPath(url) : '',
        status,
        bytes,
        ms: Math.round(performance.now() - started),
        ...outcome,
      };
      this.options.observe?.(entry);
      ctx.record?.(entry);
    };
    try {
      signal.throwIfAborted();
      url = readUrl(target);
      const headers = this.checked(url, hop, ctx);
      const spent = ctx.budget.take();
      if (spent !== null) throw new EgressError('NETWORK_LIMIT', `more than ${spent}`);
      held.release ??= await ctx.budget.slot(signal);
      const address = await this.address(url, signal);
      const answer = await this.poolFor(url, address).request({
        path: `${url.pathname}${url.search}`,
        method: hop.method,
        headers,
        body: hop.body ?? null,
        signal,
        // Backstops behind the fetch's own timer.
        headersTimeout: this.options.timeoutMs,
        bodyTimeout: this.options.timeoutMs,
      });
      status = answer.statusCode;
      const max = Math.min(this.options.maxResponseBytes, ctx.maxResponseBytes ?? Infinity);
      const body = await this.readCapped(answer.body, hop.method === 'HEAD' ? {} : answer.headers, url, max);
      bytes = body.byteLength;
      record({ outcome: 'ok' });
      return {
        url,
        status: answer.statusCode,
        statusText: answer.statusText,
        headers: headerList(answer.headers),
        body,
      };
    } catch (error) {
      const failure = failureOf(error, signal, url);
      record({ outcome: OUTCOME_OF_CODE[failure.code], code: failure.code });
      throw failure;
    }
  }

  /** The policy checks of one hop; answers the headers to send. */
  private checked(url: URL, hop: HopRequest, ctx: EgressFetchContext): string[] {
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new EgressError('NETWORK_DENIED', `${url.protocol} URLs are refused: only http: and https:`);
    }
    if (url.username !== '' || url.password !== '') {
      throw new EgressError('NETWORK_DENIED', 'URLs with credentials (user:password@host) are refused');
    }
    const refusal = ctx.policy.refusal(url);
    if (refusal !== undefined) throw new EgressError('NETWORK_DENIED', refusal);
    // Implied by the check above today; asserted on its own so that it holds should the policy ever loosen.
    const secret = (ctx.secrets ?? []).some((value) => carriesSecret(url, hop, value));
    if (secret && !ctx.policy.toolLists(url)) {
      throw new EgressError(
        'NETWORK_DENIED',
        `the request carries a secret of the tool and ${url.host} is not in its network.allow`,
      );
    }
    if (!TOKEN.test(hop.method) || FORBIDDEN_METHODS.has(hop.method.toUpperCase())) {
      throw new EgressError('NETWORK_ERROR', `method ${hop.method.slice(0, 32)} is not allowed`);
    }
    if (hop.body && hop.body.byteLength > this.options.maxRequestBytes) {
      throw new EgressError(
        'NETWORK_TOO_LARGE',
        `the request body is ${hop.body.byteLength} bytes, over the limit of ${this.options.maxRequestBytes}`,
      );
    }
    const flat: string[] = [];
    let agent = false;
    for (const [name, value] of hop.headers) {
      if (!TOKEN.test(name) || BAD_VALUE.test(value)) {
        throw new EgressError('NETWORK_ERROR', `header ${name.slice(0, 64)} is not a valid header`);
      }
      const lower = name.toLowerCase();
      if (OWN_HEADERS.has(lower) || lower.startsWith('proxy-')) continue;
      if (lower === 'user-agent') agent = true;
      flat.push(lower, value);
    }
    if (!agent) flat.push('user-agent', 'toolhost');
    return flat;
  }

  /** The address to connect to: every address of the host checked, the first one used. */
  private async address(url: URL, signal: AbortSignal): Promise<string> {
    const hostname = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
    const literal = parseIp(hostname);
    let addresses: string[];
    if (literal) {
      addresses = [hostname];
    } else {
      const resolved = await abortable(this.resolver(hostname), signal).catch((error: unknown) => {
        if (signal.aborted) throw error;
        throw new EgressError('NETWORK_ERROR', `${hostname} could not be resolved`);
      });
      addresses = resolved.map((entry) => entry.address);
    }
    if (addresses.length === 0) throw new EgressError('NETWORK_ERROR', `${hostname} could not be resolved`);
    for (const address of addresses) {
      const bytes = parseIp(address);
      if (!bytes) throw new EgressError('NETWORK_ERROR', `${hostname} resolved to something that is not an address`);
      const verdict = classifyAddress(bytes);
      if (verdict.public || this.opened(bytes)) continue;
      const shown = verdict.embedded === undefined ? formatIp(bytes) : `${formatIp(bytes)} (${verdict.embedded})`;
      throw new EgressError(
        'NETWORK_BLOCKED_ADDRESS',
        `${hostname} resolves to ${shown}, a ${verdict.range} address: refused`,
      );
    }
    // The first, as the system resolver orders them; the connection goes to it and nowhere else (no second lookup).
    return addresses[0] ?? hostname;
  }

  /** Whether the operator opened this address (an IPv4-mapped address counts as its IPv4 address). */
  private opened(bytes: Uint8Array): boolean {
    const ranges = this.options.allowCidrs ?? [];
    const mapped = mappedIpv4(bytes);
    return ranges.some((range) => inCidr(bytes, range) || (mapped !== undefined && inCidr(mapped, range)));
  }

  private poolFor(url: URL, address: string): Pool {
    const key = `${url.origin} ${address}`;
    const kept = this.pools.get(key);
    if (kept) {
      // Most recently used last: the first is the one to close when there are too many.
      this.pools.delete(key);
      this.pools.set(key, kept);
      return kept;
    }
    const hostname = url.hostname.endsWith('.') ? url.hostname.slice(0, -1) : url.hostname;
    // SNI and certificate checks name the host; a literal address gets none (SNI may not carry one).
    const servername = parseIp(hostname) ? undefined : hostname;
    const pool = new Pool(url.origin, { connect: pinnedConnector(this.connector, address, servername) });
    this.pools.set(key, pool);
    if (this.pools.size > MAX_POOLS) {
      const [oldest] = this.pools;
      if (oldest) {
        this.pools.delete(oldest[0]);
        void oldest[1].close().catch(() => undefined);
      }
    }
    return pool;
  }

  /** The whole body, failing NETWORK_TOO_LARGE as soon as it passes the cap (the rest is never read). */
  private async readCapped(body: Readable, headers: IncomingHttpHeaders, url: URL, max: number): Promise<Uint8Array> {
    const tooLarge = (): EgressError =>
      new EgressError('NETWORK_TOO_LARGE', `${url.host} answered more than ${max} bytes`);
    const declared = Number(headers['content-length']);
    if (Number.isFinite(declared) && declared > max) {
      body.destroy();
      throw tooLarge();
    }
    const chunks: Buffer[] = [];
    let total = 0;
    for await (const chunk of body as AsyncIterable<Buffer>) {
      total += chunk.byteLength;
      if (total > max) {
        body.destroy();
        throw tooLarge();
      }
      chunks.push(chunk);
    }
    // A fresh buffer of its own (not a view into Node's shared pool): it is copied into the isolate as it is.
    const whole = new Uint8Array(total);
    let offset = 0;
    for (const chunk of chunks) {
      whole.set(chunk, offset);
      offset += chunk.byteLength;
    }
    return whole;
  }
}

function readUrl(target: string | URL): URL {
  if (target instanceof URL) return target;
  try {
    return new URL(target);
  } catch {
    throw new EgressError('NETWORK_DENIED', 'not an absolute URL');
  }
}

function headerList(headers: IncomingHttpHeaders): [string, string][] {
  const list: [string, string][] = [];
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) list.push([name, one]);
  }
  return list;
}

const carries = (text: string, secret: string): boolean =>
  secret.length >= MIN_SECRET_LENGTH && (text.includes(secret) || text.includes(encodeURIComponent(secret)));

/** Whether a request carries the secret anywhere: its URL, a header, or its body bytes. */
export function carriesSecret(
  url: URL,
  hop: { headers: readonly [string, string][]; body?: Uint8Array | undefined },
  secret: string,
): boolean {
  if (secret.length < MIN_SECRET_LENGTH) return false;
  if (carries(url.href, secret) || carries(decodeURIComponentSafe(url.href), secret)) return true;
  if (hop.headers.some(([, value]) => carries(value, secret))) return true;
  if (!hop.body) return false;
  return Buffer.from(hop.body.buffer, hop.body.byteOffset, hop.body.byteLength).includes(Buffer.from(secret));
}

function decodeURIComponentSafe(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** Any failure as an EgressError: the abort's own reason (timeout, abort), else a network error naming the host. */
function failureOf(error: unknown, signal: AbortSignal, url: URL | undefined): EgressError {
  if (error instanceof EgressError) return error;
  if (signal.aborted && signal.reason instanceof EgressError) return signal.reason;
  const code = (error as { code?: unknown } | null)?.code;
  const detail = error instanceof Error ? error.message : String(error);
  const where = url ? `${url.host}: ` : '';
  return new EgressError(
    'NETWORK_ERROR',
    `${where}${typeof code === 'string' ? `${code} ` : ''}${detail}`.slice(0, 500),
  );
}

async function abortable<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  signal.throwIfAborted();
  let onAbort = (): void => undefined;
  const aborted = new Promise<never>((_resolve, reject) => {
    onAbort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([work, aborted]);
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}
