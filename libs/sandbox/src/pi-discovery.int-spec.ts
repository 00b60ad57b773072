// Discovering what a pi module registers: its default export runs with a recording `pi` (no execute is called),
// within a run's time and memory, in process (SandboxRuntime) and in a child process of its own (PiToolDiscovery,
// the built child under dist/, which jest's global setup builds). Hostile modules are one table, each with its end.
import { resolve } from 'node:path';
import { PiToolDiscovery } from './pi-tool-discovery';
import { SandboxRuntime } from './sandbox-runtime';
import type { PiDiscovery, PiDiscoveryRequest } from './sandbox.types';

const CHILD = resolve(__dirname, '..', '..', '..', 'dist', 'libs', 'sandbox', 'src', 'pi-discovery.child.js');

const discoveryOf = (code: string, timeoutMs = 1000): PiDiscoveryRequest => ({
  tenantId: 'tenant-pi',
  code,
  timeoutMs,
  memoryMb: 64,
});

const TWO_TOOLS = `export default function (pi) {
  pi.on('session_start', () => {});
  pi.registerTool({
    name: 'weather',
    label: 'Weather',
    description: 'Weather in a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    async execute() { throw new Error('execute must not run during discovery'); },
  });
  pi.registerTool({
    name: 'time',
    description: 'Time in a zone',
    parameters: { type: 'object', properties: { zone: { type: 'string' } } },
    execute: () => ({ content: [] }),
  });
}`;

const TWO_TOOLS_FOUND = [
  {
    name: 'weather',
    label: 'Weather',
    description: 'Weather in a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    executable: true,
  },
  {
    name: 'time',
    description: 'Time in a zone',
    parameters: { type: 'object', properties: { zone: { type: 'string' } } },
    executable: true,
  },
];

interface Row {
  name: string;
  code: string;
  /** 'discovered' with these registrations, or the failure's code (one of several where the race is the machine's). */
  expect: { registrations: unknown[] } | string | string[];
  message?: RegExp;
  /** The run's time limit; 1 s unless the row is about something else. */
  timeoutMs?: number;
}

const HOSTILE: Row[] = [
  { name: 'an infinite loop', code: 'export default function (pi) { for (;;) {} }', expect: 'TIMEOUT' },
  {
    name: 'an async default export that never settles',
    code: 'export default async function (pi) { await new Promise(() => {}); }',
    expect: 'TIMEOUT',
  },
  {
    name: 'a heap memory bomb',
    code: 'export default function (pi) { const a = []; for (;;) a.push(new Array(1e6).fill(1)); }',
    expect: 'MEMORY_LIMIT',
    // About memory, not time: on a loaded machine filling 64 MB can take longer than 1 s.
    timeoutMs: 15_000,
  },
  {
    name: 'a throwing default export',
    code: "export default function (pi) {\n  throw new Error('no tools today');\n}",
    expect: 'USER_ERROR',
    message: /no tools today.*line 2/,
  },
  { name: 'registering nothing', code: 'export default function (pi) {}', expect: { registrations: [] } },
  { name: 'registering several', code: TWO_TOOLS, expect: { registrations: TWO_TOOLS_FOUND } },
  {
    name: 'a registration that is not an object, or has throwing getters and no execute',
    code: `export default function (pi) {
  pi.registerTool(42);
  pi.registerTool({ get name() { throw new Error('boom'); }, description: 'x' });
}`,
    expect: { registrations: [null, { description: 'x', executable: false }] },
  },
  {
    name: 'parameters that are not JSON (a cycle)',
    code: "export default function (pi) { const p = { type: 'object' }; p.self = p; pi.registerTool({ name: 'a', parameters: p, execute() {} }); }",
    expect: 'OUTPUT_INVALID',
  },
  { name: 'a default export that is not a function', code: 'export default 42;', expect: 'USER_ERROR' },
  {
    name: 'code that is not a pi module',
    code: 'return 1',
    expect: 'USER_ERROR',
    message: /not a pi extension module/,
  },
  {
    name: 'a registration reaching for ctx.tools through the module scope',
    code: 'export default function (pi) { pi.registerTool({ name: typeof ctx, execute() {} }); }',
    expect: { registrations: [{ name: 'undefined', executable: true }] },
  },
];

function check(row: Row, discovery: PiDiscovery): void {
  if (typeof row.expect === 'object' && !Array.isArray(row.expect)) {
    expect(discovery).toEqual({ status: 'discovered', registrations: row.expect.registrations });
    return;
  }
  if (discovery.status !== 'failed')
    throw new Error(`expected ${String(row.expect)}, got ${JSON.stringify(discovery)}`);
  expect([row.expect].flat()).toContain(discovery.error.code);
  if (row.message) expect(discovery.error.message).toMatch(row.message);
}

describe('SandboxRuntime.discoverPiTools (in process)', () => {
  const runtime = new SandboxRuntime({ entryMode: 'async' });
  afterAll(() => runtime.dispose());

  it.each(HOSTILE)('$name', async (row) => {
    check(row, await runtime.discoverPiTools(discoveryOf(row.code, row.timeoutMs)));
  });
});

describe('PiToolDiscovery (a child process per discovery)', () => {
  const discovery = new PiToolDiscovery({ childPath: CHILD, concurrency: 2 });
  afterAll(() => discovery.close());

  it.each(HOSTILE)('$name', async (row) => {
    check(row, await discovery.discover(discoveryOf(row.code, row.timeoutMs)));
  });

  it('a built-in that grows its process outside the isolate heap ends the child, not this process', async () => {
    const found = await discovery.discover(
      discoveryOf(
        'export default function (pi) { Array.prototype.concat.call([], Array.from({ length: 3e8 })); }',
        20_000,
      ),
    );
    expect(found).toMatchObject({
      status: 'failed',
      error: { code: expect.stringMatching(/^(MEMORY_LIMIT|TIMEOUT)$/) },
    });
  }, 60_000);

  it('runs more discoveries than its concurrency, each answered', async () => {
    const one = new PiToolDiscovery({ childPath: CHILD, concurrency: 1 });
    const answers = await Promise.all(
      [TWO_TOOLS, 'export default function (pi) {}', TWO_TOOLS].map((code) => one.discover(discoveryOf(code))),
    );
    expect(answers.map((answer) => (answer.status === 'discovered' ? answer.registrations.length : -1))).toEqual([
      2, 0, 2,
    ]);
  });

  it('close() ends a discovery in flight instead of leaving it waiting', async () => {
    const closing = new PiToolDiscovery({ childPath: CHILD });
    const pending = closing.discover(discoveryOf('export default function (pi) { for (;;) {} }', 20_000));
    await new Promise((r) => setImmediate(r));
    closing.close();
    // Killed before it was ready (unavailable) or while it ran (SANDBOX_CRASH): either way it ends now, not in 20 s.
    const end = await pending.then(
      (answer) => (answer.status === 'failed' ? answer.error.code : answer.status),
      (error: unknown) => (error instanceof Error ? error.name : String(error)),
    );
    expect(['SANDBOX_CRASH', 'PiDiscoveryUnavailableError']).toContain(end);
  });

  it('a child that cannot start rejects as unavailable', async () => {
    const broken = new PiToolDiscovery({ childPath: resolve(__dirname, 'no-such-child.js') });
    await expect(broken.discover(discoveryOf(TWO_TOOLS))).rejects.toMatchObject({
      name: 'PiDiscoveryUnavailableError',
    });
  });
});
