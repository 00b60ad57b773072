/**
 * Tool code's fetch on the worker's side, through the bridge a run gets (ToolCallBridge.fetch), against a real local
 * HTTP server with 127.0.0.1/32 the only range opened: the tool's network.allow, the audit row and log line of every
 * request (never headers or bodies, secrets masked), the metrics, the tree's budget, and requests left open when the
 * run ends. The isolate's side of fetch is tested in libs/sandbox.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { InputValidatorCache, type InternalToolVersion } from '@toolhost/contracts';
import type { Resolver } from '@toolhost/egress';
import type { MetricsService } from '@toolhost/observability';
import type { AuditEntry, OutcomeJob } from '@toolhost/queue';
import { CallBudget, EgressError, type EgressRequest, type RunOutcome, type ToolBridge } from '@toolhost/sandbox';
import { Counter, Histogram, Registry } from 'prom-client';
import { BuiltinRegistry } from '../builtins/builtin-registry';
import { WorkerEgress, type EgressLog } from '../egress/worker-egress';
import type { RegistryClient } from '../registry/registry.client';
import { ToolCatalog } from '../registry/tool-catalog';
import { loadWorkerConfig } from '../worker.config';
import { InvocationRunner } from './invocation-runner';
import { OutcomeWrites } from './outcome-writes';
import type { RunState } from './run-state';
import type { SandboxRunner } from './sandbox-runner';
import { SecretMask } from './secret-mask';
import { ToolCallBridge } from './tool-call-bridge';
import { toolVersion } from '../../test/tool-version';

const API_KEY = 'sk-live-0123456789';
let server: Server;
let port = 0;
const seen: IncomingMessage[] = [];
let arrived: () => void = () => undefined;

const registry = new Registry();
const metrics = {
  counter: (name: string, help: string, labelNames: string[] = []) =>
    new Counter({ name, help, labelNames, registers: [registry] }),
  histogram: (name: string, help: string, labelNames: string[] = [], buckets?: number[]) =>
    new Histogram({ name, help, labelNames, ...(buckets ? { buckets } : {}), registers: [registry] }),
} as unknown as Pick<MetricsService, 'counter' | 'histogram'>;
const logLines: { fields: Record<string, unknown>; message: string }[] = [];
const log: EgressLog = {
  info: (fields, message) => logLines.push({ fields: fields as Record<string, unknown>, message }),
};
const resolver: Resolver = (host) =>
  host === 'api.test' ? Promise.resolve([{ address: '127.0.0.1', family: 4 }]) : Promise.reject(new Error('ENOTFOUND'));

const config = loadWorkerConfig({
  EGRESS_ALLOW_CIDRS: '127.0.0.1/32',
  EGRESS_MAX_REQUESTS_PER_INVOCATION: '3',
  EGRESS_METRIC_HOSTS: 'api.test',
});
const egress = new WorkerEgress(config, metrics, log, resolver);

const noRegistry = {
  getVersion: () => Promise.resolve(undefined),
  getTool: () => Promise.resolve(undefined),
} as unknown as RegistryClient;

/** The egress request counter, read back from the registry. */
function requestsCounter(): Counter {
  const metric = registry.getSingleMetric('toolhost_worker_egress_requests_total');
  if (!(metric instanceof Counter)) throw new Error('no egress request counter');
  return metric;
}

const tenantId = randomUUID();
const toolWith = (extra: Partial<InternalToolVersion> = {}): InternalToolVersion =>
  toolVersion(tenantId, { secrets: { API_KEY }, network: { allow: [`api.test:${port}`] }, ...extra });

function bridgeFor(tool: InternalToolVersion, withEgress = true): { bridge: ToolCallBridge; audits: AuditEntry[] } {
  const plan: RunState = {
    invocationId: randomUUID(),
    tenantId,
    toolId: tool.id,
    requestId: 'req-egress-1',
    version: tool.version,
    input: {},
    context: {},
    budget: new CallBudget(50),
    egressBudget: egress.budget(),
    deadlineAt: Date.now() + 10_000,
    secrets: new SecretMask(tool.secrets),
    outcomes: new OutcomeWrites({ publish: () => Promise.resolve() }),
  };
  const audits: AuditEntry[] = [];
  const bridge = new ToolCallBridge(
    tool,
    plan,
    { invocationId: plan.invocationId },
    audits,
    new ToolCatalog(noRegistry, true),
    new BuiltinRegistry([], undefined),
    new InputValidatorCache(),
    () => Promise.reject(new Error('no nested runs here')),
    withEgress ? egress : undefined,
  );
  return { bridge, audits };
}

const get = (path: string, headers: [string, string][] = []): EgressRequest => ({
  url: `http://api.test:${port}${path}`,
  method: 'GET',
  headers,
});
const signal = (): AbortSignal => new AbortController().signal;

async function failure(work: Promise<unknown> | undefined): Promise<EgressError> {
  try {
    await work;
  } catch (error) {
    if (error instanceof EgressError) return error;
    throw error;
  }
  throw new Error('the request succeeded');
}

async function outcomeCount(outcome: string): Promise<number> {
  const values = (await requestsCounter().get()).values;
  return values.filter((value) => value.labels.outcome === outcome).reduce((sum, value) => sum + value.value, 0);
}

beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push(req);
    if (req.url?.startsWith('/hang')) {
      arrived();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ key: req.headers['x-api-key'] ?? null }));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  await egress.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

it('makes a request the tool allows and leaves an audit row and a log line without headers, body or secrets', async () => {
  const { bridge, audits } = bridgeFor(toolWith());
  const okBefore = await outcomeCount('ok');
  const answer = await bridge.fetch(
    get(`/v1/${API_KEY}/quote?symbol=ABC&token=${API_KEY}`, [['x-api-key', API_KEY]]),
    signal(),
  );
  expect(answer.status).toBe(200);
  expect(JSON.parse(new TextDecoder().decode(answer.body))).toEqual({ key: API_KEY });
  expect(audits).toEqual([
    {
      event: 'egress',
      data: {
        method: 'GET',
        host: `api.test:${port}`,
        path: '/v1/***/quote?symbol=***&token=***',
        status: 200,
        bytes: answer.body.byteLength,
        ms: expect.any(Number),
        outcome: 'ok',
      },
      at: expect.any(String),
    },
  ]);
  const line = logLines.at(-1);
  expect(line).toMatchObject({
    message: 'egress',
    fields: { toolId: expect.any(String), invocationId: expect.any(String), requestId: 'req-egress-1' },
  });
  expect(JSON.stringify(logLines)).not.toContain(API_KEY);
  expect(await outcomeCount('ok')).toBe(okBefore + 1);
  const labelled = (await requestsCounter().get()).values;
  expect(labelled).toContainEqual(expect.objectContaining({ labels: { outcome: 'ok', host: 'api.test' } }));
});

it('refuses a host the tool does not list with NETWORK_DENIED, audited and counted', async () => {
  const { bridge, audits } = bridgeFor(toolWith({ network: { allow: ['api.example.com'] } }));
  const deniedBefore = await outcomeCount('denied');
  const error = await failure(bridge.fetch(get('/'), signal()));
  expect(error.code).toBe('NETWORK_DENIED');
  expect(audits).toEqual([
    expect.objectContaining({
      event: 'egress',
      data: expect.objectContaining({ outcome: 'denied', code: 'NETWORK_DENIED' }),
    }),
  ]);
  expect(await outcomeCount('denied')).toBe(deniedBefore + 1);
});

it('refuses every fetch of a tool without network, and of a worker without egress', async () => {
  const bare = toolWith();
  delete bare.network;
  const none = bridgeFor(bare);
  expect((await failure(none.bridge.fetch(get('/'), signal()))).code).toBe('NETWORK_DENIED');
  const noEgress = bridgeFor(toolWith(), false);
  expect((await failure(noEgress.bridge.fetch(get('/'), signal()))).code).toBe('NETWORK_DENIED');
  expect(noEgress.audits).toEqual([expect.objectContaining({ data: expect.objectContaining({ outcome: 'denied' }) })]);
});

it('counts requests per invocation tree (EGRESS_MAX_REQUESTS_PER_INVOCATION)', async () => {
  const { bridge } = bridgeFor(toolWith());
  for (let request = 0; request < 3; request++) expect((await bridge.fetch(get('/'), signal())).status).toBe(200);
  expect((await failure(bridge.fetch(get('/'), signal()))).code).toBe('NETWORK_LIMIT');
});

it("applies the tool's own limits within the server's: requests per run, response size, time", async () => {
  const network = (limits: object): Partial<InternalToolVersion> => ({
    network: { allow: [`api.test:${port}`], ...limits },
  });
  const counted = bridgeFor(toolWith(network({ maxRequests: 2 }))).bridge;
  for (let request = 0; request < 2; request++) expect((await counted.fetch(get('/'), signal())).status).toBe(200);
  const spent = await failure(counted.fetch(get('/'), signal()));
  expect([spent.code, spent.message]).toEqual(['NETWORK_LIMIT', 'more than 2 requests in this run of the tool']);

  // The answer is {"key":null}: 12 bytes.
  const small = bridgeFor(toolWith(network({ maxResponseBytes: 8 }))).bridge;
  const large = await failure(small.fetch(get('/'), signal()));
  expect([large.code, large.message]).toEqual(['NETWORK_TOO_LARGE', `api.test:${port} answered more than 8 bytes`]);
  expect((await bridgeFor(toolWith(network({ maxResponseBytes: 12 }))).bridge.fetch(get('/'), signal())).status).toBe(
    200,
  );

  const quick = bridgeFor(toolWith(network({ timeoutMs: 150 }))).bridge;
  const late = await failure(quick.fetch(get('/hang'), signal()));
  expect([late.code, late.message]).toEqual(['NETWORK_TIMEOUT', 'no complete answer within 150 ms']);
});

it('aborts the requests a run left open when it ends, and the runner does so itself', async () => {
  const tool = toolWith();
  const reached = new Promise<void>((resolve) => (arrived = resolve));
  let pending: Promise<unknown> | undefined;
  const sandbox: SandboxRunner = {
    run: async (_request, bridge: ToolBridge): Promise<RunOutcome> => {
      // The code starts a request and returns without awaiting it.
      pending = bridge.fetch?.(get('/hang'), signal());
      void pending?.catch(() => undefined);
      await reached;
      return { status: 'succeeded', result: 1, content: [], logs: [], durationMs: 1, budgetUsed: 0 };
    },
    close: () => Promise.resolve(),
  };
  const outcomes: OutcomeJob[] = [];
  const runner = new InvocationRunner(
    new ToolCatalog(
      {
        getVersion: () => Promise.resolve(tool),
        getTool: () => Promise.resolve(undefined),
      } as unknown as RegistryClient,
      true,
    ),
    sandbox,
    new BuiltinRegistry([], undefined),
    new InputValidatorCache(),
    { publish: (outcome) => (outcomes.push(outcome), Promise.resolve()) },
    { wallClockMs: 10_000, toolCallBudget: 50 },
    egress,
  );
  const { invocation, settle } = await runner.runJob({
    v: 1,
    invocationId: randomUUID(),
    tenantId,
    toolId: tool.id,
    version: 1,
    input: {},
    context: {},
    enqueuedAt: Date.now(),
  });
  await settle();
  expect(invocation.status).toBe('succeeded');
  expect((await failure(pending)).code).toBe('NETWORK_ABORTED');
  const audit = outcomes.find((outcome) => outcome.invocationId === invocation.id)?.audit ?? [];
  expect(audit.map((entry) => entry.data)).toEqual([
    expect.objectContaining({ path: '/hang', outcome: 'aborted', code: 'NETWORK_ABORTED' }),
  ]);
});
