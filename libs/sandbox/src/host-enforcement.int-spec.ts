/**
 * The host's limits behind isolated-vm's own (SandboxRuntimeOptions: overrunGraceMs, stuckGraceMs, memorySampleMs,
 * maxRssBytes, watch). Programs that spend their time, or grow the process, inside one V8 built-in are not stopped by
 * isolated-vm's timeout or dispose(): the run must end TIMEOUT / MEMORY_LIMIT anyway, and the thread that does not
 * come back must be reported through EntryWatch.stuck (the worker then ends the process). Each program runs in a
 * child process of its own, from dist/ (jest's global setup builds it): the runaway thread lives until its process
 * ends, and would otherwise burn a CPU and gigabytes in the test runner.
 */
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';

const RUNTIME = resolve(__dirname, '../../../dist/libs/sandbox/src/index.js');

/** Runs `code` once in a SandboxRuntime with async entries; prints the outcome and the stuck report as JSON lines. */
const CHILD = `
const { SandboxRuntime } = require(${JSON.stringify(RUNTIME)});
const [code, timeoutMs, maxRssMb] = JSON.parse(process.argv[1]);
const print = (line) => process.stdout.write(JSON.stringify(line) + '\\n');
let ended = false;
let stuck = false;
const done = () => { if (ended && stuck) process.kill(process.pid, 'SIGKILL'); };
const runtime = new SandboxRuntime({
  entryMode: 'async', overrunGraceMs: 250, stuckGraceMs: 500, memorySampleMs: 50, maxRssBytes: maxRssMb * 1048576,
  watch: { syncEntry() {}, syncExit() {}, stuck(overrun) { print({ stuck: overrun }); stuck = true; done(); } },
});
runtime.run({
  tenantId: 't', toolId: 'tool', version: 3, code, input: {}, secrets: {}, context: { invocationId: 'inv-1' },
  limits: { timeoutMs, memoryMb: 64, wallClockMs: 30000, maxInputBytes: 1e6, maxResultBytes: 1e6, maxLogBytes: 65536 },
}, { callTool: async () => null, audit: async () => undefined }).then((outcome) => {
  print({ outcome });
  ended = true;
  done();
  // A run whose thread came back has no stuck report to wait for.
  setTimeout(() => process.kill(process.pid, 'SIGKILL'), 2000);
});
`;

interface Report {
  outcome?: { status: string; error?: { code: string }; blameless?: true };
  stuck?: { invocationId: string; toolId: string; version: number; code: string };
}

/** Runs the child until it reports both (it then kills itself), or kills it at the deadline. */
function runAlone(code: string, timeoutMs: number, maxRssMb: number): Promise<Report[]> {
  return new Promise((resolveReports) => {
    const child = spawn(
      process.execPath,
      ['--no-node-snapshot', '-e', CHILD, JSON.stringify([code, timeoutMs, maxRssMb])],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    // A generous bound: before, such runs went on for minutes.
    const deadline = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('exit', () => {
      clearTimeout(deadline);
      resolveReports(
        out
          .split('\n')
          .filter((line) => line.trim() !== '')
          .map((line) => JSON.parse(line) as Report),
      );
    });
  });
}

describe('host enforcement of time and memory (isolated-vm does not stop long built-ins)', () => {
  // Built-ins the realm does not refuse up front (it refuses `fill`/`copyWithin` on huge array-likes and resizable
  // buffers before they start: memory-kinds.int-spec.ts).
  it.each([
    ['lastIndexOf over a huge array-like', 'Array.prototype.lastIndexOf.call({ length: 2 ** 31 }, 1); return 1;'],
    ['slice of a huge array-like', 'return Array.prototype.slice.call({ length: 2 ** 30 }).length;'],
    ['Array.from a huge length', 'return Array.from({ length: 1e9 }).length;'],
    ['sort of a huge array-like', 'Array.prototype.sort.call({ length: 2 ** 31, 0: 2, 1: 1 }); return 1;'],
  ])(
    '%s past a 500 ms timeout ends TIMEOUT, blamed, and its thread is reported',
    async (_name, code) => {
      const reports = await runAlone(code, 500, 4096);
      const outcome = reports.find((report) => report.outcome)?.outcome;
      expect(outcome).toMatchObject({ status: 'failed', error: { code: 'TIMEOUT' } });
      expect(outcome?.blameless).toBeUndefined();
      expect(reports.find((report) => report.stuck)?.stuck).toEqual(
        expect.objectContaining({ invocationId: 'inv-1', toolId: 'tool', version: 3, code: 'TIMEOUT' }),
      );
    },
    90_000,
  );

  it.each([
    ['Array.from a huge length', 'return Array.from({ length: 1e9 }).length;'],
    ['concat of a huge array', 'return Array.prototype.concat.call([], Array.from({ length: 3e8 })).length;'],
  ])(
    '%s growing the process past its RSS limit ends MEMORY_LIMIT',
    async (_name, code) => {
      const reports = await runAlone(code, 29_000, 300);
      expect(reports.find((report) => report.outcome)?.outcome).toMatchObject({
        status: 'failed',
        error: { code: 'MEMORY_LIMIT' },
      });
    },
    90_000,
  );
});
