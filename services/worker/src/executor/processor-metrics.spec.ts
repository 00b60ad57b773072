import { Registry } from 'prom-client';
import type { Invocation } from '@toolhost/contracts';
import { ProcessorMetrics } from './processor-metrics';
import { metricsOn } from './processor-metrics.fixtures';

const invocation: Invocation = {
  id: 'inv-1',
  tool: 'custom_00000000-0000-4000-8000-000000000001',
  toolId: '00000000-0000-4000-8000-000000000001',
  version: 1,
  status: 'succeeded',
  result: 1,
};

describe('ProcessorMetrics', () => {
  it('reports lost outcomes through the logger it is given, as one structured entry, and counts each', async () => {
    const registry = new Registry();
    const entries: object[] = [];
    const metrics = new ProcessorMetrics(metricsOn(registry), { error: (entry) => entries.push(entry) });

    metrics.onOutcomesLost(invocation, 2, new Error('redis down'));

    // One object with `msg`: what pino (createProcessLogger in an executor) writes as one JSON line.
    expect(entries).toEqual([
      {
        msg: 'outcomes of a finished invocation could not be written; its job completes without them',
        invocationId: 'inv-1',
        toolId: invocation.toolId,
        lost: 2,
        error: 'redis down',
      },
    ]);
    const lost = await registry.getSingleMetric('toolhost_worker_outcomes_lost_total')?.get();
    expect(lost?.values[0]?.value).toBe(2);
  });

  it("counts every error of BullMQ's worker and logs them at most every 10 s, with how many came", async () => {
    const registry = new Registry();
    const entries: object[] = [];
    const metrics = new ProcessorMetrics(metricsOn(registry), { error: (entry) => entries.push(entry) });
    const now = jest.spyOn(Date, 'now').mockReturnValue(100_000);
    try {
      for (let i = 0; i < 5; i += 1) metrics.onWorkerError(new Error('Connection is closed.'));
      now.mockReturnValue(110_000);
      metrics.onWorkerError(new Error('Missing lock for job 7. moveToFinished'));
    } finally {
      now.mockRestore();
    }
    expect(entries).toEqual([
      { msg: 'the queue worker reported an error', error: 'Connection is closed.', count: 1 },
      { msg: 'the queue worker reported an error', error: 'Missing lock for job 7. moveToFinished', count: 5 },
    ]);
    const counted = await registry.getSingleMetric('toolhost_worker_queue_errors_total')?.get();
    expect(counted?.values[0]?.value).toBe(6);
  });
});
