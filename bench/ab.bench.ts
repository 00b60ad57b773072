/**
 * `npm run bench:ab -- <base revision>`: a paired A/B of this build against another revision, over HTTP against two
 * real stacks running side by side (the Slug Generator, autocannon). The rounds alternate between the two stacks and
 * their order flips every round, so a shared machine whose speed drifts over minutes slows both alike; each ratio is
 * the median of the ratios taken within a round. This is how the pipeline changes in docs/pipeline.md were measured.
 *
 * The base revision is checked out in a temporary git worktree beside this one (with this checkout's node_modules)
 * and built there; the worktree is removed at the end. BENCH_CONNECTIONS (1), BENCH_ROUNDS (10), BENCH_ROUND_S (3).
 *
 * Each round also reads the CPU time of the stack's processes and of Redis and Postgres from /proc: CPU per call by
 * process, and its ratio. The two stacks share Redis and Postgres, whose CPU in a round is the measured stack's plus
 * the other's idle polling (a few ms a second).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, rmSync, symlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { projectRoot } from '../scripts/project-root';
import { REDIS_URL, Stack, type StackOptions } from '../test/e2e/stack';
import { HIGH_LIMITS, measure, median, pairRounds, target, type Sample } from './http-bench';
import { cpuOf, redisPids, stackCpuGroups } from './process-cpu';

const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 1);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 10);
const ROUND_S = Number(process.env.BENCH_ROUND_S ?? 3);
const PAUSE_MS = 700;

/** Checks the base revision out and builds it; returns its root and how to remove it. */
function buildBase(root: string, revision: string): { dir: string; remove: () => void } {
  const sha = execFileSync('git', ['rev-parse', '--verify', `${revision}^{commit}`], { cwd: root })
    .toString()
    .trim();
  const dir = join(tmpdir(), `toolhost-ab-${sha.slice(0, 12)}`);
  if (existsSync(dir)) execFileSync('git', ['worktree', 'remove', '--force', dir], { cwd: root, stdio: 'ignore' });
  execFileSync('git', ['worktree', 'add', '--detach', dir, sha], { cwd: root, stdio: 'ignore' });
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'));
  process.stderr.write(`building ${revision} (${sha.slice(0, 12)}) in ${dir}\n`);
  execFileSync('npm', ['run', 'build'], { cwd: dir, stdio: 'ignore' });
  return {
    dir,
    remove: () => {
      rmSync(join(dir, 'node_modules'), { force: true });
      execFileSync('git', ['worktree', 'remove', '--force', dir], { cwd: root, stdio: 'ignore' });
    },
  };
}

/** One round of one stack: its requests, and the CPU per call (ms) of each of its process groups. */
interface Round {
  sample: Sample;
  cpuMs: Record<string, number>;
}

async function main(): Promise<void> {
  const revision = process.argv[2];
  if (!revision) throw new Error('usage: npm run bench:ab -- <base revision>');
  const root = projectRoot(__dirname);
  const base = buildBase(root, revision);
  const stops: (() => Promise<void>)[] = [];
  try {
    // The base's own stack harness starts the base's own build of every service.
    const { Stack: BaseStack } = createRequire(__filename)(join(base.dir, 'dist', 'test', 'e2e', 'stack.js')) as {
      Stack: typeof Stack;
    };
    const options: StackOptions = {
      env: { LOG_LEVEL: 'warn' },
      gatewayEnv: HIGH_LIMITS,
      // The worker's default executor count (the test stacks pin 2).
      workerEnv: { SANDBOX_PROCESSES: String(Math.max(1, availableParallelism() - 1)) },
    };
    const redisServer = redisPids(REDIS_URL);
    const start = async (name: string, StackOf: typeof Stack): Promise<(seconds: number) => Promise<Round>> => {
      const stack = await new StackOf(options).start();
      stops.push(() => stack.stop());
      const { run } = await target(name, stack);
      await run(CONNECTIONS, 2);
      const groups = { ...stackCpuGroups(stack), redis: () => cpuOf(redisServer) };
      const read = (): Record<string, number> =>
        Object.fromEntries(Object.entries(groups).map(([group, seconds]) => [group, seconds()]));
      return async (seconds) => {
        const before = read();
        const sample = await run(CONNECTIONS, seconds);
        const after = read();
        const calls = Math.max(1, sample.requests);
        const cpuMs = Object.fromEntries(
          Object.keys(after).map((group) => [group, (((after[group] ?? 0) - (before[group] ?? 0)) * 1e3) / calls]),
        );
        return { sample, cpuMs };
      };
    };
    const runs = { base: await start('base', BaseStack), this: await start('this', Stack) };
    const rounds: Record<'base' | 'this', Round[]> = { base: [], this: [] };
    for (let round = 0; round < ROUNDS; round += 1) {
      for (const name of round % 2 === 0 ? (['base', 'this'] as const) : (['this', 'base'] as const)) {
        await new Promise((resolve) => setTimeout(resolve, PAUSE_MS));
        rounds[name].push(await runs[name](ROUND_S));
      }
      process.stderr.write('.');
    }
    const samples = { base: rounds.base.map((r) => r.sample), this: rounds.this.map((r) => r.sample) };
    process.stderr.write('\n');
    const fmt = (n: number): string => (Number.isFinite(n) ? n.toFixed(3) : 'n/a');
    const per = (pick: (s: Sample) => number): number[] =>
      pairRounds(samples.this, samples.base).map(([s, base]) => pick(s) / pick(base));
    const p50 = (s: Sample): number => measure([s]).p50;
    const rps = (s: Sample): number => measure([s]).rps;
    console.log(`paired A/B, ${CONNECTIONS} client(s), ${ROUNDS} rounds of ${ROUND_S} s; base = ${revision}\n`);
    console.log('| build | p50 ms per round | req/s per round | errors |');
    console.log('|---|---|---|---|');
    for (const name of ['base', 'this'] as const) {
      const errors = samples[name].reduce((sum, s) => sum + s.errors + s.non2xx, 0);
      console.log(
        `| ${name} | ${samples[name].map((s) => fmt(p50(s))).join(' ')} | ${samples[name].map((s) => rps(s).toFixed(0)).join(' ')} | ${errors} |`,
      );
    }
    console.log('');
    console.log(`p50, this / base: ${fmt(median(per(p50)))} (rounds: ${per(p50).map(fmt).join(', ')})`);
    console.log(`req/s, this / base: ${fmt(median(per(rps)))} (rounds: ${per(rps).map(fmt).join(', ')})`);
    const total = (r: Round): number => Object.values(r.cpuMs).reduce((sum, ms) => sum + ms, 0);
    const cpuRatios = pairRounds(rounds.this, rounds.base).map(([r, base]) => total(r) / total(base));
    console.log(`CPU per call, this / base: ${fmt(median(cpuRatios))} (rounds: ${cpuRatios.map(fmt).join(', ')})`);
    console.log('');
    const groupNames = Object.keys(rounds.this[0]?.cpuMs ?? {});
    console.log(`| build | CPU ms per call (median of rounds): ${groupNames.join(' · ')} | total |`);
    console.log('|---|---|---|');
    for (const name of ['base', 'this'] as const) {
      const byGroup = groupNames.map((group) => fmt(median(rounds[name].map((r) => r.cpuMs[group] ?? 0))));
      console.log(`| ${name} | ${byGroup.join(' · ')} | ${fmt(median(rounds[name].map(total)))} |`);
    }
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
    base.remove();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
