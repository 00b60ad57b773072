import type { JsonValue } from '@toolhost/contracts';
import { CallBudget, SandboxRuntime, type RunRequest, type ToolBridge } from '@toolhost/sandbox';
import { SandboxPool } from './process-pool/sandbox-pool';
import ivm from 'isolated-vm';
import { readFileSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import type { Workload } from './bench-workloads';

/** One way of running a tool once; `call` returns the tool's result so every strategy is checked for correctness. */
export interface Strategy {
  name: string;
  setup(workload: Workload): Promise<() => Promise<JsonValue>>;
  teardown(): Promise<void>;
  /** CPU used by helper processes so far, in microseconds (the pool's children). */
  helperCpuMicros?: () => number;
}

/** utime + stime of a process from /proc (Linux), in microseconds; 0 where /proc is not available. */
function processCpuMicros(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    // Fields after the command: state is index 0, so utime (14th) and stime (15th) are at 11 and 12.
    return ((Number(fields[11]) + Number(fields[12])) * 1e6) / CLOCK_TICKS;
  } catch {
    return 0;
  }
}

/** USER_HZ: 100 on every Linux this runs on. */
const CLOCK_TICKS = 100;

const NO_BRIDGE: ToolBridge = {
  callTool: () => Promise.reject(new Error('no tools in the benchmark')),
  audit: () => Promise.resolve(),
};

function runRequest(workload: Workload, i: number): RunRequest {
  return {
    tenantId: 'bench',
    toolId: workload.name,
    version: 1,
    code: workload.toolCode,
    input: workload.input,
    secrets: {},
    context: { invocationId: `bench-${i}` },
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

const resultOf = (outcome: Awaited<ReturnType<SandboxRuntime['run']>>): JsonValue => {
  if (outcome.status !== 'succeeded') throw new Error(`run failed: ${outcome.error.code} ${outcome.error.message}`);
  return outcome.result;
};

export function runtimeStrategy(): Strategy {
  const runtime = new SandboxRuntime();
  let i = 0;
  return {
    name: 'toolhost runtime (in process, warm isolate, a global as made per call)',
    setup: (workload) =>
      Promise.resolve(async () => {
        i += 1;
        return resultOf(await runtime.run(runRequest(workload, i), NO_BRIDGE, new CallBudget()));
      }),
    teardown: () => {
      runtime.dispose();
      return Promise.resolve();
    },
  };
}

export function poolStrategy(): Strategy {
  // No recycling during the measurement: the children's CPU is read from /proc by pid.
  const pool = new SandboxPool({ size: 1, maxRunsPerChild: Number.MAX_SAFE_INTEGER, maxRssMb: 1 << 20 });
  let i = 0;
  return {
    name: 'toolhost runtime through the pool (1 child, IPC per call)',
    setup: (workload) =>
      Promise.resolve(async () => {
        i += 1;
        return resultOf(await pool.run(runRequest(workload, i), NO_BRIDGE, new CallBudget()));
      }),
    teardown: () => pool.close(),
    helperCpuMicros: () => pool.pids().reduce((sum, pid) => sum + processCpuMicros(pid), 0),
  };
}

/** The naive isolated-vm pattern: a pooled Isolate, but a new Context and a fresh compile for every call. */
export function freshContextStrategy(): Strategy {
  const isolate = new ivm.Isolate({ memoryLimit: 64 });
  return {
    name: 'isolated-vm: fresh Context + compile per call',
    setup: (workload) =>
      Promise.resolve(async () => {
        const context = await isolate.createContext();
        try {
          await context.global.set('input', new ivm.ExternalCopy(workload.input).copyInto());
          const script = await isolate.compileScript(workload.scriptCode);
          return (await script.run(context, { timeout: 5000, copy: true })) as JsonValue;
        } finally {
          context.release();
        }
      }),
    teardown: () => {
      isolate.dispose();
      return Promise.resolve();
    },
  };
}

const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const vm = require('node:vm');
parentPort.postMessage(vm.runInNewContext(workerData.code, { input: workerData.input }, { timeout: 5000 }));
`;

/** The pattern many platforms use: a new worker thread per call, running the code with vm.runInNewContext. */
export function workerThreadStrategy(): Strategy {
  return {
    name: 'new worker thread + vm.runInNewContext per call',
    setup: (workload) =>
      Promise.resolve(
        () =>
          new Promise<JsonValue>((resolve, reject) => {
            const worker = new Worker(WORKER_SOURCE, {
              eval: true,
              workerData: { code: workload.scriptCode, input: workload.input },
            });
            worker.once('message', (value: JsonValue) => {
              void worker.terminate().then(() => resolve(value));
            });
            worker.once('error', reject);
          }),
      ),
    teardown: () => Promise.resolve(),
  };
}

export function directStrategy(): Strategy {
  return {
    name: 'direct function call (the floor)',
    setup: (workload) => Promise.resolve(() => Promise.resolve(workload.direct(workload.input as never))),
    teardown: () => Promise.resolve(),
  };
}
