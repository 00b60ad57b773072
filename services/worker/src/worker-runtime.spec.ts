import { Counter, Histogram, Registry } from 'prom-client';
import { InputValidatorCache, type Invocation } from '@toolhost/contracts';
import type { MetricsService } from '@toolhost/observability';
import { InvocationProcessor } from './invocation/invocation.processor';
import type { SandboxRunner } from './sandbox/sandbox-runner';
import { WorkerRuntime } from './worker-runtime';
import { loadWorkerConfig } from './worker.config';

// Only the wiring is the subject: no Redis connections, no BullMQ worker.
jest.mock('@toolhost/queue', () => ({
  ...jest.requireActual('@toolhost/queue'),
  createRedis: () => ({ on: () => undefined }),
}));
jest.mock('./invocation/invocation.processor', () => ({ InvocationProcessor: jest.fn() }));

/** The part of MetricsService that WorkerRuntime uses (the real one would bring Nest's ESM into jest). */
function metricsOn(registry: Registry): MetricsService {
  return {
    counter: (name: string, help: string, labelNames: string[] = []) =>
      new Counter({ name, help, labelNames, registers: [registry] }),
    histogram: (name: string, help: string, labelNames: string[] = []) =>
      new Histogram({ name, help, labelNames, registers: [registry] }),
  } as unknown as MetricsService;
}

const invocation: Invocation = {
  id: 'inv-1',
  tool: 'custom_00000000-0000-4000-8000-000000000001',
  toolId: '00000000-0000-4000-8000-000000000001',
  version: 1,
  status: 'succeeded',
  result: 1,
};

describe('WorkerRuntime', () => {
  it('reports lost outcomes through the logger its caller gives it, as one structured entry', () => {
    const entries: object[] = [];
    new WorkerRuntime(
      loadWorkerConfig({}),
      {} as SandboxRunner,
      new InputValidatorCache({ enabled: false }),
      metricsOn(new Registry()),
      { error: (entry) => entries.push(entry) },
    );
    const hooks = jest.mocked(InvocationProcessor).mock.calls[0][2];

    hooks.onOutcomesLost(invocation, 2, new Error('redis down'));

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
  });
});
