/**
 * Bad requests get their own answer at both HTTP services (issue 17, class 8): a malformed or over-long key is 401
 * (and the gateway does not ask the registry about it), an undecodable path is the contract's 400 envelope, and an
 * oversized body is a 413 the client reads even when it writes the whole body before reading.
 */
import { randomUUID } from 'node:crypto';
import { GatewayHarness } from '../../services/gateway/test/gateway-harness';
import { rawRequest, type RawResponse } from '../support/raw-http';
import { startRegistry, type RunningRegistry } from '../support/registry-server';

const MiB = 1024 * 1024;
const OVER_LONG_KEY = `thk_${'a'.repeat(600)}`;
const MALFORMED_KEYS = [OVER_LONG_KEY, `thk_${'b'.repeat(509)}`, 'thk_caf\u00e9', 'thk_a\tb'];
const UNDECODABLE_PATHS = ['/v1/tools/%E0%A4%A', '/v1/%', '/%', '/v1/tools/%ZZ/versions', '/internal/v1/tools/%E0'];
const REPEATS = 20;

function expectEnvelope(response: RawResponse, status: number, code: string): void {
  expect({ status: response.status, code: response.body?.error?.code }).toEqual({ status, code });
  expect(typeof response.body.error.message).toBe('string');
  expect(Object.keys(response.body)).toEqual(['error']);
}

/** Every one of `REPEATS` requests per size is answered 413 BAD_REQUEST, and the answer is read whole. */
async function expectOversizedAnswered(url: string, path: string, key: string, sizes: number[]): Promise<void> {
  for (const size of sizes) {
    for (let i = 0; i < REPEATS; i += 1) {
      const response = await rawRequest(url, {
        method: 'POST',
        path,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        bodyBytes: size,
      }).catch(
        (error: unknown) =>
          new Error(`${size} bytes, try ${i + 1}: ${error instanceof Error ? error.message : String(error)}`),
      );
      if (response instanceof Error) throw response;
      expectEnvelope(response, 413, 'BAD_REQUEST');
    }
  }
}

describe('registry HTTP edge', () => {
  let registry: RunningRegistry;

  beforeAll(async () => {
    registry = await startRegistry();
  });

  // Set by a before hook that may have failed before assigning it: close only what started.
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- see above
  afterAll(() => registry?.stop());

  it('answers 401 for a malformed or over-long key, on public and internal routes', async () => {
    for (const key of MALFORMED_KEYS) {
      const listed = await rawRequest(registry.url, {
        method: 'GET',
        path: '/v1/tools',
        headers: { authorization: `Bearer ${key}` },
      });
      expectEnvelope(listed, 401, 'UNAUTHORIZED');
      const verified = await registry.http.request('POST', '/internal/v1/keys/verify', {
        key: registry.internalToken,
        json: { key },
      });
      expect({ key, status: verified.status, code: verified.body.error?.code }).toEqual({
        key,
        status: 401,
        code: 'UNAUTHORIZED',
      });
    }
    const empty = await registry.http.request('POST', '/internal/v1/keys/verify', {
      key: registry.internalToken,
      json: { key: '' },
    });
    expect(empty.status).toBe(401);
  });

  it('answers the 400 envelope for a path that is not valid percent-encoding', async () => {
    for (const path of UNDECODABLE_PATHS) {
      const response = await rawRequest(registry.url, {
        method: 'GET',
        path,
        headers: { authorization: `Bearer ${registry.adminKey}` },
      });
      expectEnvelope(response, 400, 'BAD_REQUEST');
    }
  });

  it('answers 413 to an oversized body in a way the client can read, every time', async () => {
    await expectOversizedAnswered(registry.url, '/v1/tools', registry.adminKey, [3 * MiB, 8 * MiB, 24 * MiB]);
    // The service is still there and answering on new connections.
    expect((await registry.http.get('/health/live')).status).toBe(200);
  });
});

describe('gateway HTTP edge', () => {
  const harness = new GatewayHarness();
  const key = 'gateway-edge-key';

  beforeAll(async () => {
    harness.registry.keys.set(key, { keyId: 'k1', tenantId: randomUUID(), scopes: ['invoke', 'tools:read'] });
    await harness.start();
  });

  afterAll(() => harness.stop());

  it('answers 401 for a malformed or over-long key without asking the registry', async () => {
    const before = harness.registry.calls.verify;
    for (const bad of MALFORMED_KEYS) {
      for (const path of ['/v1/tools', `/v1/invocations/${randomUUID()}`]) {
        const response = await rawRequest(harness.url, {
          method: 'GET',
          path,
          headers: { authorization: `Bearer ${bad}` },
        });
        expectEnvelope(response, 401, 'UNAUTHORIZED');
      }
    }
    expect(harness.registry.calls.verify).toBe(before);
  });

  it('answers the 400 envelope for a path that is not valid percent-encoding', async () => {
    for (const path of [...UNDECODABLE_PATHS, '/v1/invocations/%E0%A4%A']) {
      const response = await rawRequest(harness.url, {
        method: 'GET',
        path,
        headers: { authorization: `Bearer ${key}` },
      });
      expectEnvelope(response, 400, 'BAD_REQUEST');
    }
  });

  it('answers 413 to an oversized body in a way the client can read, every time', async () => {
    await expectOversizedAnswered(harness.url, '/v1/invocations', key, [2 * MiB, 8 * MiB, 24 * MiB]);
    expect((await fetch(`${harness.url}/health/live`)).status).toBe(200);
  });
});
