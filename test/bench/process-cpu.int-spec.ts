import { existsSync } from 'node:fs';
import { Client } from 'pg';
import { cpuSeconds, pids, postgresCpu, secondsOf } from '../../bench/process-cpu';
import { POSTGRES_URL } from '../e2e/stack';

/** Resolves once the process is gone (reaped: not even a zombie is left); rejects if it is still there after 10 s. */
async function gone(pid: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (existsSync(`/proc/${pid}`)) {
    if (Date.now() > deadline) throw new Error(`backend ${pid} still there 10 s after its connection closed`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

// The benchmarks read the machine's own Postgres from /proc: only where its processes are visible.
const local = pids('pgrep -u postgres').length > 0;

describe("bench/process-cpu: the machine's Postgres", () => {
  (local ? it : it.skip)('keeps the CPU of a backend that exited between two readings', async () => {
    const client = new Client({ connectionString: `${POSTGRES_URL}/postgres` });
    await client.connect();
    let backend: number;
    let before: number;
    try {
      const [row] = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows;
      backend = row?.pid ?? 0;
      // Enough CPU in this backend that losing it would show beside what the server's other processes add meanwhile.
      // 100 rounds of ~0.05 s is far more than needed; a backend whose CPU cannot be read never gets there.
      for (let round = 0; secondsOf(cpuSeconds(backend)) < 0.3; round += 1) {
        if (round === 100) throw new Error(`backend ${backend}: its CPU time does not show in /proc`);
        await client.query('SELECT count(*) FROM generate_series(1, 1000000)');
      }
      // Read while the backend is alive: closing the connection ends it.
      before = secondsOf(postgresCpu());
    } finally {
      await client.end();
    }
    await gone(backend);
    const after = secondsOf(postgresCpu());
    // Live processes only, the backend's 0.3 s would be gone from `after`: CPU used so far can only grow.
    expect(after).toBeGreaterThanOrEqual(before);
  });
});
