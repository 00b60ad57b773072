/**
 * CPU time of processes and threads, from /proc (Linux only): what `bench:cpu`, `bench:e2e` and `bench:threads`
 * divide by the calls served.
 */
import { execSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

export interface Cpu {
  user: number;
  system: number;
}

/**
 * /proc counts CPU time in clock ticks (USER_HZ: 100 on every Linux ABI). Sums are made in whole ticks: a float sum of
 * hundredths depends on the order and number of its terms, so two readings a tick apart could compare the wrong way.
 */
const TICKS_PER_SECOND = 100;
const ticksOf = (seconds: number): number => Math.round(seconds * TICKS_PER_SECOND);

/**
 * User and kernel CPU seconds in a `stat` file of /proc (a process's, or one thread's under `task/`); `reapedChildren`
 * instead gives what a process's children that have exited used. Throws when the file cannot be read.
 */
function cpuOfStat(path: string, of: 'self' | 'reapedChildren' = 'self'): Cpu {
  // After the command name (which may hold spaces); a file without one is read as no CPU, as a missing one is.
  const afterName = readFileSync(path, 'utf8').split(') ')[1];
  if (afterName === undefined) return { user: 0, system: 0 };
  const fields = afterName.split(' ');
  const [user, system] = of === 'self' ? [fields[11], fields[12]] : [fields[13], fields[14]];
  return { user: Number(user) / TICKS_PER_SECOND, system: Number(system) / TICKS_PER_SECOND };
}

/** A `name: <number>` line of a /proc text file (`status`, `io`); NaN when it has none. */
function procField(text: string, name: string): number {
  return Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(text)?.[1] ?? NaN);
}

/**
 * User and kernel CPU seconds of a process (kernel time includes the loopback TCP work of every write it makes);
 * `reapedChildren` instead gives what its children that have exited used (an executor retired mid-run).
 */
export function cpuSeconds(pid: number, of: 'self' | 'reapedChildren' = 'self'): Cpu {
  try {
    return cpuOfStat(`/proc/${pid}/stat`, of);
  } catch {
    return { user: 0, system: 0 };
  }
}

/** The parent of a process (0 when it is gone). */
function parentOf(pid: number): number {
  try {
    return Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ')[1] ?? 0);
  } catch {
    return 0;
  }
}

/** The pids a shell command prints, one per line (none when it fails). */
export function pids(command: string): number[] {
  try {
    return execSync(command).toString().trim().split('\n').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** `pid` and every process below it. */
export function withDescendants(pid: number | undefined): number[] {
  if (pid === undefined) return [];
  return [pid, ...pids(`pgrep -P ${pid}`).flatMap((child) => withDescendants(child))];
}

/** The Redis server listening on `redisUrl`'s port. */
export function redisPids(redisUrl: string): number[] {
  const port = new URL(redisUrl).port || '6379';
  return pids(`ss -ltnpH 'sport = :${port}' | grep -o 'pid=[0-9]*' | cut -d= -f2 | sort -u`);
}

/** The exact sum of CPU readings (in whole ticks). */
export function sumCpu(list: Cpu[]): Cpu {
  let [user, system] = [0, 0];
  for (const cpu of list) {
    user += ticksOf(cpu.user);
    system += ticksOf(cpu.system);
  }
  return { user: user / TICKS_PER_SECOND, system: system / TICKS_PER_SECOND };
}

/** User + kernel CPU seconds used so far by the processes `list` names (read afresh: processes come and go). */
export function cpuOf(list: number[]): number {
  return secondsOf(sumCpu(list.map((pid) => cpuSeconds(pid))));
}

/**
 * CPU seconds used so far by the machine's Postgres server: its live processes, and those that have exited (a pooled
 * connection closed when idle, an autovacuum worker), which its postmaster has reaped. Without the latter, a backend
 * that exits between two readings takes its whole life's CPU out of the difference, which can then be negative.
 */
export function postgresCpu(): Cpu {
  const live = pids('pgrep -u postgres');
  const server = new Set(live);
  // The postmaster: the one whose parent is not the server's (backends and workers are its children).
  const postmasters = live.filter((pid) => !server.has(parentOf(pid)));
  return sumCpu([
    ...live.map((pid) => cpuSeconds(pid)),
    ...postmasters.map((pid) => cpuSeconds(pid, 'reapedChildren')),
  ]);
}

/** User + kernel seconds. */
export function secondsOf(cpu: Cpu): number {
  return (ticksOf(cpu.user) + ticksOf(cpu.system)) / TICKS_PER_SECOND;
}

/** CPU used so far by a process, the processes below it and its children that have exited. */
export function treeCpu(pid: number): Cpu {
  return sumCpu([...withDescendants(pid).map((each) => cpuSeconds(each)), cpuSeconds(pid, 'reapedChildren')]);
}

/** CPU seconds used so far, by process group of a path (read afresh: executors come and go). */
export type CpuGroups = Record<string, () => number>;

/** What `stackCpuGroups` reads of a stack (this build's Stack, or another revision's in `bench:ab`). */
interface StackProcesses {
  service(name: 'gateway' | 'worker' | 'registry'): { process: { pid?: number | undefined } };
}

/** A toolhost stack's processes: its three services (the worker with its executors, retired ones included), Postgres. */
export function stackCpuGroups(stack: StackProcesses): CpuGroups {
  const pidOf = (name: 'gateway' | 'worker' | 'registry'): number => stack.service(name).process.pid ?? 0;
  return {
    gateway: () => cpuOf([pidOf('gateway')]),
    worker: () => secondsOf(treeCpu(pidOf('worker'))),
    registry: () => cpuOf([pidOf('registry')]),
    // Shared with every other database on the machine: read it as an upper bound.
    postgres: () => secondsOf(postgresCpu()),
  };
}

/** One thread's counters so far: CPU seconds, and how often it gave up the CPU (waited) or had it taken (preempted). */
export interface ThreadCounters {
  tid: number;
  user: number;
  system: number;
  voluntary: number;
  involuntary: number;
}

/** The threads of a process and their counters (none when it is gone); a thread that ends meanwhile is left out. */
export function threadsOf(pid: number): ThreadCounters[] {
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return [];
  }
  return tids.flatMap((tid) => {
    try {
      const cpu = cpuOfStat(`/proc/${pid}/task/${tid}/stat`);
      const status = readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8');
      return [
        {
          tid: Number(tid),
          ...cpu,
          voluntary: procField(status, 'voluntary_ctxt_switches'),
          involuntary: procField(status, 'nonvoluntary_ctxt_switches'),
        },
      ];
    } catch {
      return [];
    }
  });
}

/**
 * System calls that read and that write, made so far by a process's threads (`/proc/<pid>/io`: `syscr`, `syscw`);
 * undefined where it cannot be read (another user's process, without privileges).
 */
export function systemCallsOf(pid: number): { reads: number; writes: number } | undefined {
  try {
    const io = readFileSync(`/proc/${pid}/io`, 'utf8');
    return { reads: procField(io, 'syscr'), writes: procField(io, 'syscw') };
  } catch {
    return undefined;
  }
}
