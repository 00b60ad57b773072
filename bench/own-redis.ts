/**
 * Runs a benchmark against a redis-server of its own (a throwaway on a free port, no persistence), so that Redis's
 * CPU and its `INFO commandstats` count this benchmark's commands only, not those of other work on the machine.
 * The benchmark re-runs itself as a child with REDIS_URL pointing there. BENCH_REDIS=shared runs it against
 * REDIS_URL (or the local 6379) instead.
 */
import { spawn } from 'node:child_process';
import { reapOnExit } from '../test/support/reap-on-exit';
import { RedisServerProcess } from '../test/support/redis-server.process';

const CHILD_MARK = 'BENCH_OWN_REDIS_URL';

async function relaunch(entry: string): Promise<void> {
  const redis = await RedisServerProcess.start();
  try {
    const child = reapOnExit(
      spawn(process.execPath, [...process.execArgv, entry, ...process.argv.slice(2)], {
        stdio: 'inherit',
        env: { ...process.env, REDIS_URL: redis.url, [CHILD_MARK]: redis.url },
      }),
    );
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    if (code !== 0) throw new Error(`the benchmark exited with ${String(code)}`);
  } finally {
    await redis.kill();
  }
}

/** Runs `main` (in a child against its own Redis unless BENCH_REDIS=shared), then exits 0, or 1 on an error. */
export function runBench(main: () => Promise<void>, entry: string): void {
  const own = process.env.BENCH_REDIS !== 'shared' && process.env[CHILD_MARK] === undefined;
  (own ? relaunch(entry) : main()).then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
