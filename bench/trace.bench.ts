/**
 * `npm run bench:trace`: where one synchronous call's latency goes, hop by hop, in toolhost and in the skeleton of
 * its path (bench/skeleton-path.ts), measured side by side. Both publish the same invocation stages
 * (INVOCATION_TRACE_CHANNEL, `process.hrtime.bigint()`: one clock for every process of the machine); a recorder
 * loaded into each process (`--require`, bench/trace/stage-recorder.ts) keeps them while a round runs. A sampling
 * profiler cannot tell this on a small VM: its samples land in the socket writes that hand the CPU to the process
 * they wake. The rounds alternate between the two, after a warm-up at 64 clients (V8 still compiles for thousands of
 * calls after a start). Prints the median µs of each hop and writes the results file.
 *
 * BENCH_CONNECTIONS (1), BENCH_ROUNDS (6), BENCH_ROUND_S (3), BENCH_WARMUP_S (10).
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Stack } from '../test/e2e/stack';
import { HIGH_LIMITS, cannon, measure, target, type Sample } from './http-bench';
import { ResultsFile } from './results-file';
import { startSkeleton } from './skeleton-path';
import { recordedStages, switchRecording } from './trace/recorder-control';
import { ASIDE_SEGMENTS, PATH_SEGMENTS, segmentMedians, stageTimes, type SegmentFigure } from './trace/stage-segments';

const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 1);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6);
const ROUND_S = Number(process.env.BENCH_ROUND_S ?? 3);
const WARMUP_S = Number(process.env.BENCH_WARMUP_S ?? 10);

interface Traced {
  name: string;
  dir: string;
  run: (connections: number, seconds: number) => Promise<Sample>;
  samples: Sample[];
}

/** The environment that loads the recorder into a process and tells it where to write. */
function recorderEnv(dir: string): Record<string, string> {
  const recorder = join(__dirname, 'trace', 'stage-recorder.js');
  return { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --require ${recorder}`.trim(), TOOLHOST_TRACE_DIR: dir };
}

/** One round with the recorders on: the whole round, and nothing of the other path's rounds. */
async function tracedRound(traced: Traced): Promise<void> {
  await switchRecording(traced.dir, true);
  traced.samples.push(await traced.run(CONNECTIONS, ROUND_S));
  await switchRecording(traced.dir, false);
}

const fmt = (us: number): string => (Number.isFinite(us) ? us.toFixed(0) : '–');

async function main(): Promise<void> {
  const results = new ResultsFile('trace');
  const root = mkdtempSync(join(tmpdir(), 'toolhost-trace-'));
  const stops: (() => Promise<void>)[] = [];
  try {
    const dirOf = (name: string): string => {
      const dir = join(root, name);
      mkdirSync(dir);
      return dir;
    };
    const toolhostDir = dirOf('toolhost');
    const stack = await new Stack({
      env: { LOG_LEVEL: 'warn', ...recorderEnv(toolhostDir) },
      gatewayEnv: HIGH_LIMITS,
      // The worker's default executor count (the test stacks pin 2).
      workerEnv: { SANDBOX_PROCESSES: String(Math.max(1, availableParallelism() - 1)) },
    }).start();
    stops.push(() => stack.stop());
    const toolhost: Traced = {
      name: 'toolhost',
      dir: toolhostDir,
      run: (await target('trace', stack)).run,
      samples: [],
    };
    const skeletonDir = dirOf('skeleton');
    const skeletonPath = await startSkeleton(recorderEnv(skeletonDir));
    stops.push(skeletonPath.stop);
    const skeleton: Traced = {
      name: 'skeleton',
      dir: skeletonDir,
      run: (connections, seconds) => cannon(skeletonPath.url, '', 'skeleton', connections, seconds),
      samples: [],
    };
    const both = [toolhost, skeleton];
    for (const traced of both) await traced.run(64, WARMUP_S);
    for (let round = 0; round < ROUNDS; round += 1) {
      for (const traced of round % 2 === 0 ? both : [...both].reverse()) await tracedRound(traced);
      process.stderr.write('.');
    }
    process.stderr.write('\n');

    const figures = async (traced: Traced): Promise<{ path: SegmentFigure[]; asides: SegmentFigure[] }> => {
      const times = stageTimes(await recordedStages(traced.dir));
      return { path: segmentMedians(times, PATH_SEGMENTS), asides: segmentMedians(times, ASIDE_SEGMENTS) };
    };
    const measured = { toolhost: await figures(toolhost), skeleton: await figures(skeleton) };
    const clients = { toolhost: measure(toolhost.samples), skeleton: measure(skeleton.samples) };

    console.log(
      `\n${CONNECTIONS} client(s), ${ROUNDS} rounds of ${ROUND_S} s each, alternating; medians in µs (the Slug Generator)\n`,
    );
    console.log('| hop | toolhost | skeleton | difference |\n|---|---|---|---|');
    const rows = (kind: 'path' | 'asides'): void => {
      measured.toolhost[kind].forEach((figure, i) => {
        const other = measured.skeleton[kind][i];
        const difference = other ? figure.medianUs - other.medianUs : NaN;
        console.log(
          `| ${figure.label} | ${fmt(figure.medianUs)} | ${fmt(other?.medianUs ?? NaN)} | ${fmt(difference)} |`,
        );
      });
    };
    rows('path');
    const p50 = (name: 'toolhost' | 'skeleton'): number => clients[name].p50 * 1_000;
    console.log(
      `| client: request to response (p50) | ${fmt(p50('toolhost'))} | ${fmt(p50('skeleton'))} | ${fmt(p50('toolhost') - p50('skeleton'))} |`,
    );
    rows('asides');
    console.log(`\ntoolhost p50 ÷ skeleton p50: ${(clients.toolhost.p50 / clients.skeleton.p50).toFixed(2)}`);
    const file = await results.write(
      { connections: CONNECTIONS, rounds: ROUNDS, roundSeconds: ROUND_S, warmupSeconds: WARMUP_S },
      { hops: measured, clients },
    );
    console.log(`results: ${file}`);
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
    rmSync(root, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
