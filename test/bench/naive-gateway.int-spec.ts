import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { GatewayHarness, fakeTool } from '../../services/gateway/test/gateway-harness';
import { call, eventually } from '../../services/gateway/test/http';

const ROOT = resolve(__dirname, '../..');
const NAIVE_MAIN = resolve(ROOT, 'dist/bench/naive-gateway/naive-gateway.main.js');

/** The naive build the e2e benchmark compares against must behave like the real one, only slower. */
describe('gateway benchmark baseline (bench/naive-gateway: QueueEvents replies, no tool cache)', () => {
  const harness = new GatewayHarness();
  const { registry } = harness;
  const tenantId = randomUUID();
  const tool = fakeTool(tenantId, { inputSchema: { type: 'object', properties: { n: { type: 'integer' } } } });
  const invoke = (body: Record<string, unknown>) =>
    call(harness.url, 'POST', '/v1/invocations', { key: 'key', json: { tool: tool.id, ...body } });

  beforeAll(async () => {
    registry.keys.set('key', { keyId: 'k', tenantId, scopes: ['invoke'] });
    registry.tools.set(tool.id, tool);
    // jest's global setup builds services/ and libs/ into dist/; the baseline's own modules live in bench/.
    execFileSync('npx', ['swc', 'bench/naive-gateway', '-d', 'dist', '--config-file', '.swcrc', '-q'], { cwd: ROOT });
    await harness.start({}, NAIVE_MAIN);
  });

  afterAll(() => harness.stop());

  it('waits through QueueEvents: 200 for a finished run, failed runs included', async () => {
    const ok = await invoke({ input: { n: 1 } });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ status: 'succeeded', result: { echo: { n: 1 } } });
    const job = harness.worker.seen.find((seen) => seen.invocationId === ok.body.id);
    expect(job?.replyTo).toBeUndefined();
    const failed = await invoke({ input: { mode: 'fail' } });
    expect(failed.status).toBe(200);
    expect(failed.body.error.code).toBe('USER_ERROR');
  });

  it('answers 202 when the wait runs out, and the job still finishes', async () => {
    const accepted = await invoke({ input: { mode: 'hold' }, timeoutMs: 100 });
    expect(accepted.status).toBe(202);
    await harness.worker.whenHolding(1);
    harness.worker.releaseHeld();
    await eventually(async () => {
      const answer = await call(harness.url, 'GET', `/v1/invocations/${accepted.body.id}`, { key: 'key' });
      return answer.body.status === 'succeeded' ? true : undefined;
    });
  });

  it('asks the registry for the tool on every call', async () => {
    const before = registry.calls.tool;
    for (let i = 0; i < 3; i += 1) expect((await invoke({ input: { n: i } })).status).toBe(200);
    expect(registry.calls.tool - before).toBe(3);
  });
});
