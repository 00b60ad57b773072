/**
 * Redis going away: the gateway answers 503 UNAVAILABLE at once (nothing enqueued, no hanging request) and
 * serves again when Redis is back. Runs its own redis-server on its own port; the shared one is never touched.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { SEEDS } from './seeds';
import { Stack, freePort } from './stack';

async function startRedis(port: number): Promise<ChildProcess> {
  const server = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    {
      stdio: 'ignore',
    },
  );
  await Stack.until(
    async () => {
      const probe = spawn('redis-cli', ['-p', String(port), 'ping'], { stdio: ['ignore', 'pipe', 'ignore'] });
      let out = '';
      probe.stdout.on('data', (b: Buffer) => (out += b.toString()));
      await new Promise((r) => probe.on('exit', r));
      return out.trim();
    },
    (answer) => answer === 'PONG',
    10_000,
  );
  return server;
}

async function stopRedis(server: ChildProcess): Promise<void> {
  if (server.exitCode !== null) return;
  const exited = new Promise((r) => server.once('exit', r));
  server.kill('SIGKILL');
  await exited;
}

describe('Redis outage (e2e)', () => {
  let redisPort: number;
  let redis: ChildProcess;
  let stack: Stack;
  let key: string;
  let tool: { id: string; toolName: string };

  beforeAll(async () => {
    redisPort = await freePort();
    redis = await startRedis(redisPort);
    stack = await new Stack({ env: { REDIS_URL: `redis://127.0.0.1:${redisPort}` } }).start();
    ({ key } = await stack.tenant('outage'));
    tool = await stack.createTool(key, {
      title: 'slug',
      description: SEEDS[1].description,
      inputSchema: SEEDS[1].inputSchema,
      code: SEEDS[1].code.body,
    });
  }, 120_000);

  afterAll(async () => {
    // Set by a before hook that may have failed before assigning them: close only what started.
    /* eslint-disable @typescript-eslint/no-unnecessary-condition -- see above */
    await stack?.stop();
    if (redis) await stopRedis(redis);
    /* eslint-enable @typescript-eslint/no-unnecessary-condition */
  }, 60_000);

  it('serves, answers 503 while Redis is down, and serves again once it is back', async () => {
    const before = await stack.invoke(key, { tool: tool.toolName, input: SEEDS[1].input });
    expect(before.body).toMatchObject({ status: 'succeeded', result: SEEDS[1].expected });
    // Counted before Redis goes: this Redis keeps nothing on disk, so an outcome still in it would be lost with it.
    await Stack.until(
      () => stack.registry('GET', `/v1/tools/${tool.id}`, key),
      (r) => r.body.usageCount === 1,
    );

    await stopRedis(redis);
    const during = await stack.invoke(key, { tool: tool.toolName, input: SEEDS[1].input });
    expect(during.status).toBe(503);
    expect(during.body.error.code).toBe('UNAVAILABLE');
    const ready = await fetch(`${stack.gatewayUrl}/health/ready`);
    expect(ready.status).toBe(503);

    redis = await startRedis(redisPort);
    const after = await Stack.until(
      () => stack.invoke(key, { tool: tool.toolName, input: SEEDS[1].input }),
      (r) => r.status === 200,
      30_000,
    );
    expect(after.body).toMatchObject({ status: 'succeeded', result: SEEDS[1].expected });

    // The registry's outcome consumer came back too (the restarted Redis lost the consumer group with its data):
    // the run after the outage is counted, once.
    const record = await Stack.until(
      () => stack.registry('GET', `/v1/tools/${tool.id}`, key),
      (r) => r.body.usageCount >= 2,
      30_000,
    );
    expect(record.body.usageCount).toBe(2);
  }, 120_000);
});
