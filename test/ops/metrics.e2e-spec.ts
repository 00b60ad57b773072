/**
 * The dashboard and the alert rules cannot drift from the code: every metric they name is declared on a running
 * service's /metrics. And a call is traceable: one access line per request on the gateway and the registry, the
 * request id echoed and carried in the job.
 */
import Redis from 'ioredis';
import { join } from 'node:path';
import { INVOCATIONS_QUEUE } from '@toolhost/queue';
import { Stack, REDIS_URL } from '../e2e/stack';
import { toolBody } from '../support/registry-fixtures';
import { declaredMetrics, referencedMetrics } from './dashboard-metrics';

const root = join(__dirname, '..', '..');

describe('deploy/observability against the running services', () => {
  let stack: Stack;
  let key: string;
  let tenantId: string;

  beforeAll(async () => {
    // The stack logs at warn; access lines at warn come through it (and show ACCESS_LOG_LEVEL at work).
    stack = await new Stack({ env: { ACCESS_LOG_LEVEL: 'warn' } }).start();
    ({ key, tenantId } = await stack.tenant('ops'));
  }, 120_000);

  afterAll(async () => {
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- unset when beforeAll failed
    await stack?.stop();
  }, 120_000);

  it('serves every metric the dashboard and the alert rules name', async () => {
    const referenced = referencedMetrics(root);
    // The worker's /metrics carries its executors' metrics once they have first reported (a heartbeat after they
    // start): read until they are there, within a deadline.
    const scrape = async (): Promise<Set<string>> => {
      const declared = new Set<string>();
      for (const service of ['registry', 'gateway', 'worker']) {
        const response = await fetch(`${stack.service(service).url}/metrics`);
        expect(response.status).toBe(200);
        for (const name of declaredMetrics(await response.text())) declared.add(name);
      }
      return declared;
    };
    const declared = await Stack.until(scrape, (names) => referenced.every((name) => names.has(name)));

    expect(referenced.length).toBeGreaterThan(20);
    expect(referenced.filter((name) => !declared.has(name))).toEqual([]);
  });

  it('writes one access line per request with the request id it echoes, and carries the id into the job', async () => {
    const tool = await stack.createTool(key, toolBody());
    const requestId = `ops-${Date.now()}`;
    const answer = await stack.request(
      stack.service('gateway').url,
      'POST',
      '/v1/invocations',
      key,
      { tool: tool.toolName, input: { a: 1, b: 2 } },
      { 'x-request-id': requestId },
    );

    expect(answer.status).toBe(200);
    expect(answer.headers.get('x-request-id')).toBe(requestId);
    const lines = await Stack.until(
      () => Promise.resolve(accessLines(stack.service('gateway').output, requestId)),
      (found) => found.length > 0,
    );
    expect(lines).toEqual([
      expect.objectContaining({
        msg: 'request',
        level: 40,
        service: 'gateway',
        method: 'POST',
        route: '/v1/invocations',
        status: 200,
        tenant: tenantId,
        requestId,
      }),
    ]);
    expect(accessLines(stack.service('registry').output).some((line) => line.route === '/v1/tools')).toBe(true);

    const redis = new Redis(REDIS_URL);
    try {
      const data = await redis.hget(`${stack.queuePrefix}:${INVOCATIONS_QUEUE}:${String(answer.body.id)}`, 'data');
      expect(JSON.parse(data ?? '{}')).toMatchObject({ requestId });
    } finally {
      redis.disconnect();
    }
  });
});

function accessLines(output: string[], requestId?: string): Record<string, unknown>[] {
  return output
    .join('')
    .split('\n')
    .filter((line) => line.includes('"msg":"request"'))
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((line) => requestId === undefined || line.requestId === requestId);
}
