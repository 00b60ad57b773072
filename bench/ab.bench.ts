/**
 * `npm run bench:ab -- <base revision>`: a paired A/B of this build against another revision, over HTTP against two
 * real stacks running side by side (the Slug Generator, autocannon). The rounds alternate between the two stacks and
 * their order flips every round, so a shared machine whose speed drifts over minutes slows both alike; each ratio is
 * the median of the ratios taken within a round. This is how the pipeline changes in docs/pipeline.md were measured.
 *
 * The base revision is checked out in a temporary git worktree beside this one (with this checkout's node_modules)
 * and built there; the worktree is removed at the end. BENCH_CONNECTIONS (1), BENCH_ROUNDS (10), BENCH_ROUND_S (3).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, rmSync, symlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { projectRoot } from '../scripts/project-root';
import { Stack, type StackOptions } from '../test/e2e/stack';
import { measure, median, pairRounds, target, type Sample } from './http-bench';

const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 1);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 10);
const ROUND_S = Number(process.env.BENCH_ROUND_S ?? 3);
const PAUSE_MS = 700;

const HIGH_LIMITS = { RATE_LIMIT_PER_SEC: '1000000', RATE_LIMIT_BURST: '1000000', MAX_QUEUED_PER_TENANT: '100000' };

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
    const start = async (name: string, StackOf: typeof Stack): Promise<(seconds: number) => Promise<Sample>> => {
      const stack = await new StackOf(options).start();
      stops.push(() => stack.stop());
      const { run } = await target(name, stack);
      await run(CONNECTIONS, 2);
      return (seconds) => run(CONNECTIONS, seconds);
    };
    const runs = { base: await start('base', BaseStack), this: await start('this', Stack) };
    const samples: Record<'base' | 'this', Sample[]> = { base: [], this: [] };
    for (let round = 0; round < ROUNDS; round += 1) {
      for (const name of round % 2 === 0 ? (['base', 'this'] as const) : (['this', 'base'] as const)) {
        await new Promise((resolve) => setTimeout(resolve, PAUSE_MS));
        samples[name].push(await runs[name](ROUND_S));
      }
      process.stderr.write('.');
    }
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
