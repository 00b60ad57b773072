import Fastify from 'fastify';
import type { DestinationStream } from 'pino';
import { defined } from '../../../test/support/defined';
import { installAccessLog, requestIdOf, type AccessLogSettings } from './access-log';

function memory(): DestinationStream & { lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  return { lines, write: (chunk: string) => void lines.push(JSON.parse(chunk) as Record<string, unknown>) };
}

const ALL: AccessLogSettings = { LOG_LEVEL: 'info', ACCESS_LOG_LEVEL: 'info', ACCESS_LOG_SAMPLE_RATE: 1 };

/**
 * A real Fastify instance with the request ids the services' adapter gives (createHttpEdgeAdapter, whose Nest
 * package jest cannot load), and a few routes.
 */
async function server(settings: AccessLogSettings, out: DestinationStream) {
  const fastify = Fastify({ genReqId: requestIdOf });
  installAccessLog(fastify, 'gateway', settings, out);
  fastify.addHook('preHandler', (request, _reply, done) => {
    if (request.headers.authorization === 'Bearer tenant-key') {
      (request as { principal?: unknown }).principal = { tenantId: 't-1', keyId: 'k-1', scopes: [] };
    }
    done();
  });
  fastify.post('/v1/tools/:id', () => ({ ok: true }));
  fastify.get('/boom', async (_request, reply) => reply.code(500).send({ error: 'x' }));
  fastify.get('/health/ready', () => ({ status: 'ok' }));
  fastify.get('/metrics', () => '');
  await fastify.ready();
  return fastify;
}

describe('installAccessLog', () => {
  it('writes one line per request: method, route pattern, status, duration, tenant, request id; no body or key', async () => {
    const out = memory();
    const fastify = await server(ALL, out);
    const response = await fastify.inject({
      method: 'POST',
      url: '/v1/tools/abc?x=1',
      headers: { authorization: 'Bearer tenant-key', 'x-request-id': 'caller-id-1' },
      payload: { secret: 'do-not-log' },
    });

    expect(response.headers['x-request-id']).toBe('caller-id-1');
    expect(out.lines).toHaveLength(1);
    const line = defined(out.lines[0], 'an access line');
    expect(line).toMatchObject({
      msg: 'request',
      service: 'gateway',
      method: 'POST',
      route: '/v1/tools/:id',
      status: 200,
      tenant: 't-1',
      requestId: 'caller-id-1',
    });
    expect(typeof line.durationMs).toBe('number');
    expect(JSON.stringify(line)).not.toMatch(/do-not-log|tenant-key|abc/);
    await fastify.close();
  });

  it('makes a new id when the caller sends none or an unusable one, and echoes it', async () => {
    const out = memory();
    const fastify = await server(ALL, out);
    const none = await fastify.inject({ method: 'GET', url: '/nowhere' });
    const bad = await fastify.inject({ method: 'GET', url: '/nowhere', headers: { 'x-request-id': 'a b\u0001' } });

    const ids = [none.headers['x-request-id'], bad.headers['x-request-id']];
    for (const id of ids) expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(ids[0]).not.toBe(ids[1]);
    expect(out.lines.map((line) => [line.route, line.status, line.tenant, line.requestId])).toEqual([
      ['unmatched', 404, null, ids[0]],
      ['unmatched', 404, null, ids[1]],
    ]);
    await fastify.close();
  });

  it('leaves probes and scrapes out', async () => {
    const out = memory();
    const fastify = await server(ALL, out);
    await fastify.inject({ method: 'GET', url: '/health/ready' });
    await fastify.inject({ method: 'GET', url: '/metrics' });

    expect(out.lines).toEqual([]);
    await fastify.close();
  });

  it('samples: at rate 0 only 5xx answers are logged', async () => {
    const out = memory();
    const fastify = await server({ ...ALL, ACCESS_LOG_SAMPLE_RATE: 0 }, out);
    for (let i = 0; i < 5; i++) await fastify.inject({ method: 'POST', url: '/v1/tools/a', payload: {} });
    await fastify.inject({ method: 'GET', url: '/boom' });

    expect(out.lines.map((line) => line.status)).toEqual([500]);
    await fastify.close();
  });

  it('writes nothing when silent or below LOG_LEVEL, and still echoes the id', async () => {
    for (const settings of [
      { ...ALL, ACCESS_LOG_LEVEL: 'silent' },
      { ...ALL, ACCESS_LOG_LEVEL: 'debug' },
    ] satisfies AccessLogSettings[]) {
      const out = memory();
      const fastify = await server(settings, out);
      const response = await fastify.inject({ method: 'GET', url: '/boom', headers: { 'x-request-id': 'r-2' } });

      expect(response.headers['x-request-id']).toBe('r-2');
      expect(out.lines).toEqual([]);
      await fastify.close();
    }
  });
});
