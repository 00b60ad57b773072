/**
 * How fast the host ends runs past their limits (issue 17, classes 1 and 2), over the running stack with one
 * executor: for each program of test/e2e/host-limit-programs.ts, the time from the limit to the caller's answer,
 * and the executor's peak RSS (VmHWM from /proc, read every 20 ms while the case runs). For time, the limit is the
 * tool's timeoutMs after the request was sent (so the figure includes the HTTP and queue hops); for memory, the
 * first sample where an executor's RSS passed SANDBOX_MAX_RSS_MB.
 *
 *   npm run bench:host-limits            (MAX_RSS_MB=400 by default)
 */
import { readFileSync } from 'node:fs';
import { Stack } from '../test/e2e/stack';
import { executorPids, standbyReady, type Answer } from '../test/e2e/executor-support';
import {
  MEMORY_PROGRAM_TIMEOUT_MS,
  MEMORY_PROGRAMS,
  SYNC_PROGRAM,
  TIME_PROGRAMS,
  type HostLimitProgram,
} from '../test/e2e/host-limit-programs';

const MAX_RSS_MB = Number(process.env.MAX_RSS_MB ?? 400);
/** The time programs run where the RSS limit is out of their reach, so that it is the time limit that ends them. */
const TIME_MAX_RSS_MB = 4096;
const TIMEOUT_MS = 1_000;

/** kB fields of /proc/<pid>/status, 0 once the process is gone. */
function statusKb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  try {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) : 0;
  } catch {
    return 0;
  }
}

interface Row {
  kind: 'time' | 'memory';
  name: string;
  code: string;
  limitToEndMs: number;
  peakRssMb: number;
  replaced: boolean;
}

async function main(): Promise<void> {
  const rows: Row[] = [];
  await measureClass('time', TIME_MAX_RSS_MB, rows);
  await measureClass('memory', MAX_RSS_MB, rows);
  report(rows);
}

/** One stack (one executor and a standby) for the programs of one class. */
async function measureClass(kind: Row['kind'], maxRssMb: number, rows: Row[]): Promise<void> {
  const stack = await new Stack({
    workerEnv: { SANDBOX_PROCESSES: '1', EXECUTOR_STANDBY: 'on', SANDBOX_MAX_RSS_MB: String(maxRssMb) },
  }).start();
  try {
    const { key } = await stack.tenant('bench-host-limits');
    const ready = (): Promise<string> => standbyReady(stack);

    const measure = async (
      kind: Row['kind'],
      program: HostLimitProgram,
      timeoutMs: number,
      input: Record<string, unknown> = {},
      warm = 0,
    ): Promise<void> => {
      await ready();
      const tool = await stack.createTool(key, {
        title: `${kind}: ${program.name}`,
        description: program.name,
        inputSchema: { type: 'object' },
        code: program.code,
        timeoutMs,
      });
      for (let i = 0; i < warm; i += 1) await stack.invoke(key, { tool: tool.toolName, input: { n: 10 } });
      const before = executorPids(stack);
      const peaks = new Map<number, number>();
      let crossedAt: number | undefined;
      const sampler = setInterval(() => {
        for (const pid of executorPids(stack)) {
          peaks.set(pid, Math.max(peaks.get(pid) ?? 0, statusKb(pid, 'VmHWM')));
          if (crossedAt === undefined && statusKb(pid, 'VmRSS') > maxRssMb * 1024) crossedAt = Date.now();
        }
      }, 20);
      const sent = Date.now();
      const answer = await stack.invoke<Answer>(key, { tool: tool.toolName, input, timeoutMs: 120_000 });
      const answeredAt = Date.now();
      // Sampled on until the executor is gone (a stuck thread grows it while it drains), for at most 10 s.
      const replaced = await Stack.until(
        () => Promise.resolve(before.some((pid) => !executorPids(stack).includes(pid))),
        (gone) => gone,
        10_000,
      ).catch(() => false);
      clearInterval(sampler);
      const limitAt = kind === 'time' ? sent + timeoutMs : (crossedAt ?? answeredAt);
      rows.push({
        kind,
        name: program.name,
        code: answer.body.error?.code ?? answer.body.status,
        limitToEndMs: answeredAt - limitAt,
        peakRssMb: Math.round(Math.max(0, ...peaks.values()) / 1024),
        replaced,
      });
      console.log(JSON.stringify(rows[rows.length - 1]));
    };

    if (kind === 'time') {
      for (const program of TIME_PROGRAMS) await measure('time', program, TIMEOUT_MS);
      await measure('time', SYNC_PROGRAM, TIMEOUT_MS, { n: 2 ** 31 }, 6);
    } else {
      for (const program of MEMORY_PROGRAMS) await measure('memory', program, MEMORY_PROGRAM_TIMEOUT_MS);
    }
  } finally {
    await stack.stop();
  }
}

function report(rows: Row[]): void {
  console.log(
    `\ntime: timeoutMs ${TIMEOUT_MS}, SANDBOX_MAX_RSS_MB=${TIME_MAX_RSS_MB}; ` +
      `memory: timeoutMs ${MEMORY_PROGRAM_TIMEOUT_MS}, SANDBOX_MAX_RSS_MB=${MAX_RSS_MB}`,
  );
  console.log('| class | program | ended | limit → answer (ms) | executor peak RSS (MB) | executor replaced |');
  console.log('|---|---|---|---:|---:|---|');
  for (const row of rows) {
    console.log(
      `| ${row.kind} | ${row.name} | ${row.code} | ${row.limitToEndMs} | ${row.peakRssMb} | ${row.replaced ? 'yes' : 'no'} |`,
    );
  }
  for (const kind of ['time', 'memory'] as const) {
    const of = rows.filter((row) => row.kind === kind);
    console.log(
      `${kind}: worst limit → answer ${Math.max(...of.map((r) => r.limitToEndMs))} ms, ` +
        `peak executor RSS ${Math.max(...of.map((r) => r.peakRssMb))} MB`,
    );
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
