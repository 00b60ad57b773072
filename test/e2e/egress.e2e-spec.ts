/**
 * Issue 19 end to end (registry, gateway, worker as processes): an imported TradingGoose tool whose body calls an API
 * with `{{API_KEY}}` through `fetch` fails NETWORK_DENIED until its owner sets the secret and allows the API's host,
 * then runs unchanged; the local API checks the key, and the audit log keeps the request without the key.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Stack } from './stack';

const API_KEY = 'sk-e2e-7f3a9c21d4';

const quoteSchema = {
  type: 'object',
  properties: { symbol: { type: 'string' } },
  required: ['symbol'],
};

// TradingGoose body code: `<symbol>` is the input, `{{API_KEY}}` the secret.
const QUOTE_BODY = `
const response = await fetch('http://127.0.0.1:PORT/quote?symbol=' + encodeURIComponent(<symbol>), {
  headers: { Authorization: 'Bearer {{API_KEY}}', Accept: 'application/json' },
});
if (!response.ok) throw new Error('the API answered ' + response.status);
const data = await response.json();
return { symbol: data.symbol, price: data.price };`;

const gooseFile = (port: number): Record<string, unknown> => ({
  version: '2',
  fileType: 'tradingGooseExport',
  exportedAt: '2026-12-01T12:00:00.000Z',
  exportedFrom: 'tradinggoose',
  resourceTypes: ['customTools'],
  customTools: [
    {
      title: 'Stock Quote',
      schema: {
        type: 'function',
        function: { name: 'stock_quote', description: 'Price of a stock', parameters: quoteSchema },
      },
      code: QUOTE_BODY.replace('PORT', String(port)),
    },
  ],
  skills: [],
  workflows: [],
  watchlists: [],
  indicators: [],
});

describe('egress (e2e)', () => {
  let stack: Stack;
  let api: Server;
  let port = 0;
  const seen: IncomingMessage[] = [];

  beforeAll(async () => {
    api = createServer((req, res) => {
      seen.push(req);
      const url = new URL(req.url ?? '/', 'http://api');
      if (req.headers.authorization !== `Bearer ${API_KEY}`) {
        res.writeHead(401, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: 'bad key' }));
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ symbol: url.searchParams.get('symbol'), price: 123.45 }));
    });
    api.listen(0, '127.0.0.1');
    await once(api, 'listening');
    port = (api.address() as AddressInfo).port;
    // The API listens on loopback: the worker may connect there only because this range is opened for the test.
    stack = await new Stack({ workerEnv: { EGRESS_ALLOW_CIDRS: '127.0.0.1/32' } }).start();
  }, 120_000);

  afterAll(async () => {
    // Set by a before hook that may have failed before assigning it: close only what started.
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- see above
    await stack?.stop();
    api.closeAllConnections();
    await new Promise((resolve) => api.close(resolve));
  }, 60_000);

  it('runs an imported TradingGoose tool that calls an API with its secret, once its host is allowed', async () => {
    const { key } = await stack.tenant('egress');
    const imported = await stack.registry('POST', '/v1/tools/import', key, gooseFile(port));
    expect(imported.status).toBe(201);
    const tool: string = imported.body.imported[0].toolName;
    const id: string = imported.body.imported[0].id;

    // Imported without network: the fetch is refused before anything leaves the worker.
    const refused = await stack.invoke(key, { tool, input: { symbol: 'ACME' } });
    expect(refused.status).toBe(200);
    // The code did not catch the TypeError its fetch threw (the audit row below carries NETWORK_DENIED).
    expect(refused.body).toMatchObject({
      status: 'failed',
      error: { code: 'USER_ERROR', details: { name: 'TypeError', code: 'NETWORK_DENIED' } },
    });
    expect(seen).toHaveLength(0);

    const granted = await stack.registry('PATCH', `/v1/tools/${id}`, key, {
      secrets: { API_KEY },
      network: { allow: [`127.0.0.1:${port}`] },
    });
    expect(granted.status).toBe(200);
    expect(granted.body.network).toEqual({ allow: [`127.0.0.1:${port}`] });

    const quote = await stack.invoke(key, { tool, input: { symbol: 'ACME' } });
    expect(quote.body).toMatchObject({ status: 'succeeded', result: { symbol: 'ACME', price: 123.45 } });
    expect(seen.at(-1)?.headers.authorization).toBe(`Bearer ${API_KEY}`);

    // The audit log keeps the request (method, host, path with query values masked, status) and never the key.
    const audit = await Stack.until(
      () => stack.registry('GET', `/v1/tools/${id}/audit`, key),
      (answer) => (answer.body.items as { event: string }[]).filter((item) => item.event === 'egress').length >= 2,
    );
    const egress = (audit.body.items as { event: string; data: Record<string, unknown> }[]).filter(
      (item) => item.event === 'egress',
    );
    expect(egress).toContainEqual(
      expect.objectContaining({
        data: expect.objectContaining({
          method: 'GET',
          host: `127.0.0.1:${port}`,
          path: '/quote?symbol=***',
          status: 200,
          outcome: 'ok',
        }),
      }),
    );
    expect(egress).toContainEqual(
      expect.objectContaining({ data: expect.objectContaining({ outcome: 'denied', code: 'NETWORK_DENIED' }) }),
    );
    expect(JSON.stringify(audit.body)).not.toContain(API_KEY);

    // The worker's metrics count both.
    // The worker's metrics count both (executors report theirs with their heartbeats).
    const ok = /toolhost_worker_egress_requests_total\{outcome="ok"\} [1-9]/;
    const denied = /toolhost_worker_egress_requests_total\{outcome="denied"\} [1-9]/;
    const metrics = await Stack.until(
      () => fetch(`${stack.workerUrl}/metrics`).then((response) => response.text()),
      (text) => ok.test(text) && denied.test(text),
    );
    expect(metrics).toMatch(ok);
    expect(metrics).toMatch(denied);
  });
});
