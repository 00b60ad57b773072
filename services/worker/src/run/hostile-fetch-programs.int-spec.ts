/**
 * Hostile fetches from real tool code: the runner on an in-process SandboxRuntime (as in an executor) with the worker's
 * egress, against local HTTP servers, 127.0.0.1/32 the only range opened (none for the address cases). Each program
 * catches what its fetch throws and returns its `code`; after each, a plain run on the same runtime still works.
 *
 * The network rows of the hostile-program suite (libs/sandbox/src/hostile-programs.int-spec.ts has the rest): they
 * need the worker's egress, which the sandbox library cannot depend on.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { InputValidatorCache, type InternalToolVersion, type ToolNetwork } from '@toolhost/contracts';
import type { Resolver } from '@toolhost/egress';
import type { MetricsService } from '@toolhost/observability';
import type { OutcomeJob } from '@toolhost/queue';
import { SandboxRuntime } from '@toolhost/sandbox';
import { Counter, Histogram, Registry } from 'prom-client';
import { BuiltinRegistry } from '../builtins/builtin-registry';
import { WorkerEgress } from '../egress/worker-egress';
import type { RegistryClient } from '../registry/registry.client';
import { ToolCatalog } from '../registry/tool-catalog';
import { loadWorkerConfig } from '../worker.config';
import { InvocationRunner } from './invocation-runner';
import { toolVersion } from '../../test/tool-version';

const API_KEY = 'sk-live-programs-0123';
const tenantId = randomUUID();
const tools = new Map<string, InternalToolVersion>();
const seen: IncomingMessage[] = [];
let server: Server;
let port = 0;
let written = 0;
// Requests to /slow in flight at once, and the most seen.
let inFlight = 0;
let highWater = 0;

/** Metrics into a registry of their own (each WorkerEgress declares the same names, as each executor does). */
const metricsOf = (registry = new Registry()): Pick<MetricsService, 'counter' | 'histogram'> =>
  ({
    counter: (name: string, help: string, labelNames: string[] = []) =>
      new Counter({ name, help, labelNames, registers: [registry] }),
    histogram: (name: string, help: string, labelNames: string[] = [], buckets?: number[]) =>
      new Histogram({ name, help, labelNames, ...(buckets ? { buckets } : {}), registers: [registry] }),
  }) as unknown as Pick<MetricsService, 'counter' | 'histogram'>;
const log = { info: () => undefined };
const resolver: Resolver = (host) => {
  const address = { 'api.test': '127.0.0.1', 'internal.test': '10.0.0.7' }[host];
  return address ? Promise.resolve([{ address, family: 4 }]) : Promise.reject(new Error('ENOTFOUND'));
};
const settings = {
  EGRESS_MAX_RESPONSE_BYTES: String(1024 * 1024),
  EGRESS_TIMEOUT_MS: '1000',
};
const open = new WorkerEgress(
  loadWorkerConfig({ ...settings, EGRESS_ALLOW_CIDRS: '127.0.0.1/32' }),
  metricsOf(),
  log,
  resolver,
);
const closed = new WorkerEgress(loadWorkerConfig(settings), metricsOf(), log, resolver);

// The program every case runs (URLs in the table below name the test server's port as PORT): one fetch, caught; the answer's status and the start of its text, or the error.
const PROGRAM = `export async function handle(input) {
  try {
    const response = await fetch(input.url, input.init);
    return { status: response.status, text: (await response.text()).slice(0, 200) };
  } catch (error) {
    return { name: error.name, code: error.code ?? null, message: String(error.message).slice(0, 300) };
  }
}`;

// 1,000 fetches at once, each settled: how many succeeded ('ok') and how many failed with each code.
const PARALLEL_FETCHES = `export async function handle(input) {
  const results = await Promise.allSettled(Array.from({ length: 1000 }, () => fetch(input.url)));
  const codes = {};
  for (const r of results) {
    const key = r.status === 'fulfilled' ? 'ok' : r.reason.code;
    codes[key] = (codes[key] ?? 0) + 1;
  }
  return codes;
}`;

function addTool(code: string, allow: string[], limits: Omit<ToolNetwork, 'allow'> = {}): InternalToolVersion {
  const tool = toolVersion(tenantId, { code, timeoutMs: 5_000, secrets: { API_KEY }, network: { allow, ...limits } });
  tools.set(tool.id, tool);
  return tool;
}

const registry = {
  getVersion: (id: string) => Promise.resolve(tools.get(id)),
  getTool: () => Promise.resolve(undefined),
} as unknown as RegistryClient;

describe('hostile fetches from tool code', () => {
  const runtime = new SandboxRuntime();
  const sandbox = {
    run: runtime.run.bind(runtime),
    close: () => {
      runtime.dispose();
      return Promise.resolve();
    },
  };
  const outcomes: OutcomeJob[] = [];
  const runnerOf = (egress: WorkerEgress): InvocationRunner =>
    new InvocationRunner(
      new ToolCatalog(registry, true),
      sandbox,
      new BuiltinRegistry([], undefined),
      new InputValidatorCache(),
      { publish: (outcome) => (outcomes.push(outcome), Promise.resolve()) },
      { wallClockMs: 15_000, toolCallBudget: 50 },
      egress,
    );
  const runners = { open: runnerOf(open), closed: runnerOf(closed) };

  const run = async (tool: InternalToolVersion, input: Record<string, unknown>, egress: 'open' | 'closed' = 'open') => {
    const { invocation, settle } = await runners[egress].runJob({
      v: 1,
      invocationId: randomUUID(),
      tenantId,
      toolId: tool.id,
      version: 1,
      input: input as never,
      context: {},
      enqueuedAt: Date.now(),
    });
    await settle();
    return invocation;
  };

  const plain = addTool('export function handle() { return "still works"; }', []);
  const stillWorks = async (): Promise<void> => {
    expect(await run(plain, {})).toMatchObject({ status: 'succeeded', result: 'still works' });
  };

  beforeAll(async () => {
    server = createServer((req, res) => {
      seen.push(req);
      const url = new URL(req.url ?? '/', 'http://x');
      if (url.pathname === '/redirect') {
        res.writeHead(302, { location: url.searchParams.get('to') ?? '/' });
        res.end();
      } else if (url.pathname === '/huge') {
        const chunk = Buffer.alloc(64 * 1024, 120);
        res.writeHead(200);
        const pump = (): void => {
          while (written < 1024 ** 3) {
            written += chunk.length;
            if (!res.write(chunk)) {
              res.once('drain', pump);
              return;
            }
          }
          res.end();
        };
        pump();
      } else if (url.pathname === '/slow') {
        inFlight += 1;
        highWater = Math.max(highWater, inFlight);
        setTimeout(() => {
          inFlight -= 1;
          res.writeHead(200);
          res.end('slow');
        }, 50);
      } else if (url.pathname === '/endless') {
        res.writeHead(200);
        res.write('started');
      } else {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ ok: true, auth: req.headers.authorization ?? null }));
      }
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    port = (server.address() as AddressInfo).port;
  });

  afterAll(async () => {
    await sandbox.close();
    await Promise.all([open.close(), closed.close()]);
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('reaches a listed host, with its secret', async () => {
    const tool = addTool(PROGRAM, [`api.test:${port}`]);
    const answer = await run(tool, {
      url: `http://api.test:${port}/ok`,
      init: { headers: { authorization: `Bearer ${API_KEY}` } },
    });
    expect(answer).toMatchObject({ status: 'succeeded', result: { status: 200 } });
    expect(JSON.parse((answer.result as { text: string }).text)).toEqual({ ok: true, auth: `Bearer ${API_KEY}` });
  });

  it.each([
    ['a host not on the list', 'http://other.test:PORT/ok', 'open', 'NETWORK_DENIED'],
    [
      'a redirect to a private address',
      'http://api.test:PORT/redirect?to=http://internal.test/',
      'open',
      'NETWORK_BLOCKED_ADDRESS',
    ],
    ['http://[::ffff:127.0.0.1]', 'http://[::ffff:127.0.0.1]:PORT/ok', 'closed', 'NETWORK_BLOCKED_ADDRESS'],
    ['http://0x7f000001', 'http://0x7f000001:PORT/ok', 'closed', 'NETWORK_BLOCKED_ADDRESS'],
    ['http://169.254.169.254', 'http://169.254.169.254/latest/meta-data/', 'closed', 'NETWORK_BLOCKED_ADDRESS'],
    ['userinfo (allowed@evil)', 'http://api.test:PORT@evil.test/', 'open', 'NETWORK_DENIED'],
    ['a file: URL', 'file:///etc/passwd', 'open', 'NETWORK_DENIED'],
    ['a data: URL', 'data:text/plain,hello', 'open', 'NETWORK_DENIED'],
    ['a 1 GiB response', 'http://api.test:PORT/huge', 'open', 'NETWORK_TOO_LARGE'],
    ['a response that never ends', 'http://api.test:PORT/endless', 'open', 'NETWORK_TIMEOUT'],
  ] as const)('%s fails with its code, and the next run works', async (_name, url, egress, code) => {
    const listed = [
      `api.test:${port}`,
      'internal.test',
      `[::ffff:7f00:1]:${port}`,
      `127.0.0.1:${port}`,
      '169.254.169.254',
      'evil.test',
    ];
    const tool = addTool(PROGRAM, listed);
    const before = seen.length;
    const answer = await run(tool, { url: url.replace('PORT', String(port)) }, egress);
    expect(answer).toMatchObject({ status: 'succeeded', result: { name: 'TypeError', code } });
    if (code !== 'NETWORK_TOO_LARGE' && code !== 'NETWORK_TIMEOUT' && code !== 'NETWORK_BLOCKED_ADDRESS') {
      expect(seen.length).toBe(before);
    }
    if (code === 'NETWORK_TOO_LARGE') expect(written).toBeLessThan(64 * 1024 * 1024);
    await stillWorks();
  });

  it('1,000 parallel fetches: 50 made, the rest NETWORK_LIMIT', async () => {
    const tool = addTool(PARALLEL_FETCHES, [`api.test:${port}`]);
    const before = seen.length;
    expect(await run(tool, { url: `http://api.test:${port}/ok` })).toMatchObject({
      status: 'succeeded',
      result: { ok: 50, NETWORK_LIMIT: 950 },
    });
    expect(seen.length - before).toBe(50);
    await stillWorks();
  });

  it('1,000 parallel fetches of a tool that allows itself 5 requests, 2 at a time: 5 made, never more than 2 open', async () => {
    const tool = addTool(PARALLEL_FETCHES, [`api.test:${port}`], { maxRequests: 5, maxConcurrent: 2 });
    const before = seen.length;
    highWater = 0;
    expect(await run(tool, { url: `http://api.test:${port}/slow` })).toMatchObject({
      status: 'succeeded',
      result: { ok: 5, NETWORK_LIMIT: 995 },
    });
    expect(seen.length - before).toBe(5);
    expect(highWater).toBe(2);
    await stillWorks();
  });

  it('redirect "manual" answers the 3xx as it is, and "error" refuses it, without following', async () => {
    const tool = addTool(
      `export async function handle(input) {
        const manual = await fetch(input.url, { redirect: 'manual' });
        const error = await fetch(input.url, { redirect: 'error' }).catch((e) => e.code);
        return [manual.status, manual.headers.get('location'), manual.redirected, error];
      }`,
      [`api.test:${port}`],
    );
    const before = seen.length;
    const to = `http://api.test:${port}/ok`;
    const answer = await run(tool, { url: `http://api.test:${port}/redirect?to=${encodeURIComponent(to)}` });
    expect(answer).toMatchObject({ status: 'succeeded', result: [302, to, false, 'NETWORK_ERROR'] });
    // Two requests to /redirect, none to /ok.
    expect(seen.slice(before).map((req) => new URL(req.url ?? '', 'http://x').pathname)).toEqual([
      '/redirect',
      '/redirect',
    ]);
  });

  it('a fetch still open when the tool returns is aborted, and audited', async () => {
    const tool = addTool(
      `export async function handle(input) { fetch(input.url).catch(() => {}); return 'returned'; }`,
      [`api.test:${port}`],
    );
    const answer = await run(tool, { url: `http://api.test:${port}/endless` });
    expect(answer).toMatchObject({ status: 'succeeded', result: 'returned' });
    const audit = outcomes.find((outcome) => outcome.invocationId === answer.id)?.audit ?? [];
    expect(audit).toEqual([
      expect.objectContaining({ event: 'egress', data: expect.objectContaining({ outcome: 'aborted' }) }),
    ]);
    await stillWorks();
  });

  it('a secret sent to a host the tool does not list never leaves', async () => {
    const tool = addTool(PROGRAM, [`api.test:${port}`]);
    const before = seen.length;
    const answer = await run(tool, {
      url: `http://other.test:${port}/ok?key=${API_KEY}`,
      init: { headers: { authorization: `Bearer ${API_KEY}` } },
    });
    expect(answer).toMatchObject({ status: 'succeeded', result: { code: 'NETWORK_DENIED' } });
    expect(seen.length).toBe(before);
    const audit = outcomes.find((outcome) => outcome.invocationId === answer.id)?.audit ?? [];
    expect(JSON.stringify(audit)).not.toContain(API_KEY);
  });
});
