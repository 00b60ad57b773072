/**
 * SIGTERM during a Redis outage: every service stops, as it does with Redis up. Connections that queue their commands
 * while Redis is away (the registry's outcome consumer, the worker's queue connections, the subscribers) used to hold
 * the shutdown for as long as the outage lasted: the registry and the worker were still running a minute after
 * SIGTERM, until a process manager killed them. Runs its own redis-server; the shared one is never touched.
 */
import { RedisServerProcess } from '../support/redis-server.process';
import { Stack } from './stack';

describe('shutdown while Redis is down (e2e)', () => {
  let redis: RedisServerProcess | undefined;
  let stack: Stack | undefined;

  afterAll(async () => {
    await stack?.stop();
    await redis?.kill();
  });

  it('each service exits 0 on SIGTERM after its Redis went away', async () => {
    redis = await RedisServerProcess.start();
    stack = await new Stack({ redisUrl: redis.url, workerEnv: { SANDBOX_PROCESSES: '1' } }).start();
    const { key } = await stack.tenant('shutdown');
    const tool = await stack.createTool(key, {
      title: 'echo',
      description: 'echo',
      inputSchema: { type: 'object' },
      code: 'export async function handle(input) { return input; }',
    });
    // Every connection has been used: the outcome of this run went through the registry's consumer.
    const answer = await stack.invoke(key, { tool: tool.toolName, input: { a: 1 } });
    expect(answer.status).toBe(200);

    await redis.kill();
    for (const name of ['gateway', 'registry', 'worker']) {
      // Resolves once the process has exited (the test's timeout is the bound).
      const exit = await Stack.signal(stack.service(name), 'SIGTERM');
      expect({ name, ...exit }).toEqual({ name, code: 0, signal: null });
    }
  });
});
