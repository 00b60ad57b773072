// The cost of one sandboxed `fetch` (issue 19): a tool that fetches a small JSON answer from a local HTTP server
// and returns it, against the same request made directly with undici. Two bridges: a plain `undici.request` to
// that server (no egress policy, no DNS), which measures the sandbox boundary itself (the request and response
// crossing it, the Response built in the isolate, the run around it); and the worker's EgressClient (the policy,
// the address check, the pinned connection), which is what a tool's fetch costs in production.
import type { JsonValue } from '@toolhost/contracts';
import {
  CallBudget,
  SandboxRuntime,
  type EgressRequest,
  type EgressResponse,
  type RunRequest,
  type ToolBridge,
} from '@toolhost/sandbox';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { EgressBudget, EgressClient, EgressPolicy, parseCidr } from '@toolhost/egress';
import { Sampler, type MeasureBudget, type Measurement } from './bench-measure';

const BODY = JSON.stringify({ symbol: 'ACME', price: 123.45, currency: 'USD', at: '2026-12-01T00:00:00Z' });
const BUDGET: MeasureBudget = { warmup: 300, maxIterations: 20_000, maxMs: 3000 };

/** undici's response headers as the seam's pairs. */
function pairs(headers: Record<string, string | string[] | undefined>): [string, string][] {
  const out: [string, string][] = [];
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) out.push([name, one]);
  }
  return out;
}

/** ToolBridge.fetch as a plain undici request: the honest cost of the boundary, without the egress policy. */
const bridge: ToolBridge = {
  callTool: () => Promise.reject(new Error('no tools in the benchmark')),
  audit: () => Promise.resolve(),
  async fetch(req: EgressRequest, signal: AbortSignal): Promise<EgressResponse> {
    const answer = await request(req.url, {
      method: req.method,
      // undici takes a flat list of names and values.
      headers: req.headers.flat(),
      ...(req.body === undefined ? {} : { body: req.body }),
      signal,
    });
    const body = new Uint8Array(await answer.body.arrayBuffer());
    return {
      url: req.url,
      status: answer.statusCode,
      statusText: '',
      headers: pairs(answer.headers),
      redirected: false,
      body,
    };
  },
};

/**
 * ToolBridge.fetch as the worker makes it: the egress client with the tool's policy (its `network.allow` names the
 * server, the loopback range opened as EGRESS_ALLOW_CIDRS opens it in tests), the host resolved and checked, the
 * connection pinned to the checked address.
 */
function egressBridge(client: EgressClient, host: string): ToolBridge {
  const policy = EgressPolicy.forTool([host], { toolHosts: true, allow: [], deny: [] });
  return {
    ...bridge,
    fetch: (req, signal) =>
      client.fetch(req, { policy, signal, deadline: Date.now() + 30_000, budget: new EgressBudget(50, 10) }),
  };
}

function runRequest(url: string, i: number): RunRequest {
  return {
    tenantId: 'bench-fetch',
    toolId: 'fetch-quote',
    version: 1,
    code: 'const r = await fetch(input.url, { headers: { accept: "application/json" } });\nreturn await r.json();',
    input: { url },
    secrets: {},
    context: { invocationId: `bench-fetch-${i}` },
    limits: {
      timeoutMs: 5000,
      memoryMb: 64,
      wallClockMs: 30_000,
      maxInputBytes: 1 << 20,
      maxResultBytes: 1 << 20,
      maxLogBytes: 64 << 10,
    },
  };
}

const fmt = (n: number, digits = 0): string =>
  n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

/** Markdown lines: one fetch through the sandbox against one direct undici request, interleaved in `rounds`. */
export async function measureFetch(rounds: number): Promise<string[]> {
  const server: Server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' }).end(BODY);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/quote`;
  const runtime = new SandboxRuntime();
  const loopback = parseCidr('127.0.0.1/32');
  const client = new EgressClient({
    maxResponseBytes: 5 << 20,
    maxRequestBytes: 1 << 20,
    timeoutMs: 10_000,
    ...(loopback ? { allowCidrs: [loopback] } : {}),
  });
  const viaEgress = egressBridge(client, new URL(url).host);
  let i = 0;
  const sandboxed = async (): Promise<JsonValue> => {
    i += 1;
    const outcome = await runtime.run(runRequest(url, i), bridge, new CallBudget());
    if (outcome.status !== 'succeeded') throw new Error(`run failed: ${outcome.error.code} ${outcome.error.message}`);
    return outcome.result;
  };
  const egressed = async (): Promise<JsonValue> => {
    i += 1;
    const outcome = await runtime.run(runRequest(url, i), viaEgress, new CallBudget());
    if (outcome.status !== 'succeeded') throw new Error(`run failed: ${outcome.error.code} ${outcome.error.message}`);
    return outcome.result;
  };
  const direct = async (): Promise<JsonValue> => {
    const answer = await request(url, { headers: { accept: 'application/json' } });
    return (await answer.body.json()) as JsonValue;
  };
  const expected = JSON.parse(BODY) as JsonValue;
  for (const call of [sandboxed, egressed, direct]) {
    const got = JSON.stringify(await call());
    if (got !== BODY) throw new Error(`fetch bench: got ${got}, expected ${JSON.stringify(expected)}`);
  }
  const samplers: [string, Sampler][] = [
    ['direct `undici.request` + `body.json()`', new Sampler(direct, BUDGET)],
    ['a tool: `fetch` + `json()` in the sandbox (bridge: `undici.request`)', new Sampler(sandboxed, BUDGET)],
    ["a tool: `fetch` + `json()` in the sandbox (bridge: the worker's `EgressClient`)", new Sampler(egressed, BUDGET)],
  ];
  for (let round = 0; round < rounds; round += 1) {
    for (const [, sampler] of samplers) await sampler.round(rounds);
    process.stderr.write('.');
  }
  runtime.dispose();
  await client.close();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  const results: [string, Measurement][] = samplers.map(([name, sampler]) => [name, sampler.result()]);
  const [, base] = results[0] as [string, Measurement];
  const lines = [
    '### One fetch to a local HTTP server',
    '',
    '| how | calls per CPU-second (per core) | calls/s (wall, one at a time) | p50 ms | p99 ms | p50 added |',
    '|---|---:|---:|---:|---:|---:|',
  ];
  for (const [name, m] of results) {
    lines.push(
      `| ${name} | ${fmt(m.callsPerCpuSecond)} | ${fmt(m.callsPerSecond)} | ${fmt(m.p50Ms, 3)} | ${fmt(m.p99Ms, 3)} | ${fmt(m.p50Ms - base.p50Ms, 3)} |`,
    );
  }
  lines.push('');
  return lines;
}
