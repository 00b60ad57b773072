/**
 * EgressClient against real HTTP servers on 127.0.0.1 (listen(0)), with 127.0.0.1/32 the only range opened, and names
 * answered by a resolver of the test's own: policy, SSRF (addresses, numeric hosts, rebinding, redirects), limits,
 * aborts, and the secret rule.
 */
import { once, setMaxListeners } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { EgressError } from '@toolhost/sandbox';
import { EgressBudget } from './egress-budget';
import { EgressClient, type EgressFetchContext, type EgressFetchRequest, type Resolver } from './egress-client';
import { EgressPolicy } from './egress-policy';
import type { EgressRecord } from './egress-record';
import { operatorPolicyOf } from './egress-settings';
import { parseCidr, type Cidr } from './ip-address';

interface TestServer {
  port: number;
  /** Requests that reached it. */
  seen: IncomingMessage[];
  /** Most requests it had open at once. */
  maxOpen: number;
}

const servers: Server[] = [];
const sockets = new Set<Socket>();

async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<TestServer> {
  const state: TestServer = { port: 0, seen: [], maxOpen: 0 };
  let open = 0;
  const server = createServer((req, res) => {
    state.seen.push(req);
    open += 1;
    state.maxOpen = Math.max(state.maxOpen, open);
    res.on('close', () => (open -= 1));
    handler(req, res);
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  servers.push(server);
  state.port = (server.address() as AddressInfo).port;
  return state;
}

const loopbackOnly = [parseCidr('127.0.0.1/32')].filter((cidr): cidr is Cidr => cidr !== undefined);
const names: Record<string, string[]> = {
  'api.test': ['127.0.0.1'],
  'other.test': ['127.0.0.1'],
  'internal.test': ['192.168.1.10'],
  'metadata.test': ['169.254.169.254'],
  'mixed.test': ['127.0.0.1', '10.0.0.5'],
};
const lookups: string[] = [];
const resolver: Resolver = (host) => {
  lookups.push(host);
  const addresses = names[host];
  if (!addresses) return Promise.reject(new Error(`ENOTFOUND ${host}`));
  return Promise.resolve(addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })));
};

const clientWith = (options: { allowCidrs?: Cidr[]; resolver?: Resolver } = {}): EgressClient =>
  new EgressClient({
    maxResponseBytes: 64 * 1024,
    maxRequestBytes: 1024,
    timeoutMs: 5_000,
    allowCidrs: options.allowCidrs ?? loopbackOnly,
    resolver: options.resolver ?? resolver,
  });
const client = clientWith();
const closedClient = clientWith({ allowCidrs: [] });

const anyHost = operatorPolicyOf({ EGRESS_TOOL_HOSTS: 'on' });
let records: EgressRecord[] = [];

const ctx = (allow: string[], extra: Partial<EgressFetchContext> = {}): EgressFetchContext => ({
  policy: EgressPolicy.forTool(allow, anyHost),
  signal: new AbortController().signal,
  deadline: Date.now() + 30_000,
  budget: new EgressBudget(50, 10),
  record: (record) => records.push(record),
  ...extra,
});
const get = (url: string, headers: [string, string][] = []): EgressFetchRequest => ({ url, method: 'GET', headers });

async function failure(work: Promise<unknown>): Promise<EgressError> {
  try {
    await work;
  } catch (error) {
    if (error instanceof EgressError) return error;
    throw error;
  }
  throw new Error('the request succeeded');
}

let api: TestServer;

beforeAll(async () => {
  api = await serve((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === '/hello') {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (chunk: string) => (body += chunk));
      req.on('end', () => {
        res.writeHead(201, 'Made It', ['content-type', 'application/json', 'set-cookie', 'a=1', 'set-cookie', 'b=2']);
        res.end(
          JSON.stringify({
            method: req.method,
            body,
            key: req.headers['x-key'] ?? null,
            ua: req.headers['user-agent'],
          }),
        );
      });
      return;
    }
    if (url.pathname === '/redirect') {
      res.writeHead(Number(url.searchParams.get('status') ?? 302), { location: url.searchParams.get('to') ?? '/' });
      res.end();
      return;
    }
    if (url.pathname === '/echo-headers') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ method: req.method, headers: req.headers }));
      return;
    }
    res.writeHead(404);
    res.end();
  });
});

beforeEach(() => {
  records = [];
  lookups.length = 0;
});

afterAll(async () => {
  await Promise.all([client.close(), closedClient.close()]);
  for (const socket of sockets) socket.destroy();
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
});

describe('a request the policy allows', () => {
  it('goes out with its method, headers and body and answers status, headers and body; one record, no headers', async () => {
    const answer = await client.fetch(
      {
        url: `http://api.test:${api.port}/hello?symbol=ABC&key=sk-123456`,
        method: 'POST',
        headers: [
          ['x-key', 'k1'],
          ['host', 'evil.test'],
        ],
        body: new TextEncoder().encode('ping'),
      },
      ctx([`api.test:${api.port}`]),
    );
    expect(answer).toMatchObject({
      url: `http://api.test:${api.port}/hello?symbol=ABC&key=sk-123456`,
      status: 201,
      statusText: 'Made It',
      redirected: false,
    });
    expect(answer.headers).toEqual(
      expect.arrayContaining([
        ['set-cookie', 'a=1'],
        ['set-cookie', 'b=2'],
      ]),
    );
    expect(JSON.parse(new TextDecoder().decode(answer.body))).toEqual({
      method: 'POST',
      body: 'ping',
      key: 'k1',
      ua: 'toolhost',
    });
    expect(api.seen.at(-1)?.headers.host).toBe(`api.test:${api.port}`);
    expect(records).toEqual([
      {
        method: 'POST',
        host: `api.test:${api.port}`,
        path: '/hello?symbol=***&key=***',
        status: 201,
        bytes: answer.body.byteLength,
        ms: expect.any(Number),
        outcome: 'ok',
      },
    ]);
  });

  it('refuses a request body over the cap', async () => {
    const error = await failure(
      client.fetch(
        { ...get(`http://api.test:${api.port}/hello`), method: 'POST', body: new Uint8Array(2048) },
        ctx([`api.test:${api.port}`]),
      ),
    );
    expect(error.code).toBe('NETWORK_TOO_LARGE');
  });
});

describe('who may be reached', () => {
  it('refuses a host the tool does not list, and does not resolve it', async () => {
    const before = api.seen.length;
    const error = await failure(
      client.fetch(get(`http://other.test:${api.port}/hello`), ctx([`api.test:${api.port}`])),
    );
    expect(error.code).toBe('NETWORK_DENIED');
    expect(error.message).toMatch(/other\.test:\d+ is not in the tool's network.allow/);
    expect(api.seen.length).toBe(before);
    expect(lookups).toEqual([]);
    expect(records).toEqual([expect.objectContaining({ outcome: 'denied', code: 'NETWORK_DENIED', status: null })]);
  });

  it('refuses a port the entry does not name (80 and 443 only without one)', async () => {
    const error = await failure(client.fetch(get(`http://api.test:${api.port}/hello`), ctx(['api.test'])));
    expect(error.code).toBe('NETWORK_DENIED');
  });

  it.each([
    ['http://allowed.test@evil.test/', /credentials/],
    ['http://api.test:1@evil.test/', /credentials/],
    ['file:///etc/passwd', /file: URLs are refused/],
    ['data:text/plain,hello', /data: URLs are refused/],
    ['ftp://api.test/', /ftp: URLs are refused/],
    ['/relative', /not an absolute URL/],
  ])('refuses %s', async (url, message) => {
    const error = await failure(client.fetch(get(url), ctx(['allowed.test', 'api.test', 'evil.test'])));
    expect(error.code).toBe('NETWORK_DENIED');
    expect(error.message).toMatch(message);
  });

  it('refuses every request of a tool without network.allow', async () => {
    const error = await failure(client.fetch(get(`http://api.test:${api.port}/hello`), ctx([])));
    expect(error.code).toBe('NETWORK_DENIED');
  });
});

describe('addresses (SSRF)', () => {
  it.each([
    ['http://[::ffff:127.0.0.1]:PORT/', '[::ffff:7f00:1]:PORT', /loopback/],
    ['http://0x7f000001:PORT/', '127.0.0.1:PORT', /127\.0\.0\.1.*loopback/],
    ['http://2130706433:PORT/', '127.0.0.1:PORT', /loopback/],
    ['http://127.1:PORT/', '127.0.0.1:PORT', /loopback/],
    ['http://169.254.169.254/latest/meta-data/', '169.254.169.254', /cloud metadata/],
    ['http://[fd00:ec2::254]/', '[fd00:ec2::254]', /cloud metadata/],
    ['http://[::1]:PORT/', '[::1]:PORT', /loopback/],
    ['http://[64:ff9b::7f00:1]:PORT/', '[64:ff9b::7f00:1]:PORT', /loopback/],
    ['http://internal.test/', 'internal.test', /192\.168\.1\.10.*private/],
    ['http://metadata.test/', 'metadata.test', /cloud metadata/],
  ])('%s (listed as %s) is a blocked address', async (url, listed, message) => {
    const port = String(api.port);
    const before = api.seen.length;
    const error = await failure(
      closedClient.fetch(get(url.replace('PORT', port)), ctx([listed.replace('PORT', port)])),
    );
    expect(error.code).toBe('NETWORK_BLOCKED_ADDRESS');
    expect(error.message).toMatch(message);
    expect(api.seen.length).toBe(before);
    expect(records).toEqual([expect.objectContaining({ outcome: 'blocked_address' })]);
  });

  it('refuses a name when any of its addresses is blocked, even if the first is open', async () => {
    const error = await failure(
      client.fetch(get(`http://mixed.test:${api.port}/hello`), ctx([`mixed.test:${api.port}`])),
    );
    expect(error.code).toBe('NETWORK_BLOCKED_ADDRESS');
    expect(error.message).toMatch(/10\.0\.0\.5/);
  });

  it('opens 127.0.0.1 through EGRESS_ALLOW_CIDRS only, and only for hosts the tool lists', async () => {
    const answer = await client.fetch(get(`http://127.0.0.1:${api.port}/hello`), ctx([`127.0.0.1:${api.port}`]));
    expect(answer.status).toBe(201);
    const error = await failure(
      closedClient.fetch(get(`http://127.0.0.1:${api.port}/hello`), ctx([`127.0.0.1:${api.port}`])),
    );
    expect(error.code).toBe('NETWORK_BLOCKED_ADDRESS');
  });

  it('connects to the address it checked: a second answer of the resolver is never used (DNS rebinding)', async () => {
    // First a public address, then loopback: a client that looked the name up again to connect would reach 127.0.0.1.
    let calls = 0;
    const rebinding: Resolver = () => {
      calls += 1;
      return Promise.resolve([{ address: calls === 1 ? '8.8.8.8' : '127.0.0.1', family: 4 }]);
    };
    const rebound = clientWith({ allowCidrs: [], resolver: rebinding });
    try {
      const before = api.seen.length;
      const error = await failure(
        rebound.fetch(
          { ...get(`http://rebind.test:${api.port}/hello`), timeoutMs: 300 },
          ctx([`rebind.test:${api.port}`]),
        ),
      );
      expect(['NETWORK_ERROR', 'NETWORK_TIMEOUT']).toContain(error.code);
      expect(calls).toBe(1);
      expect(api.seen.length).toBe(before);
    } finally {
      await rebound.close();
    }
  });

  it('connects to the checked loopback address although a later answer names a blocked one', async () => {
    let calls = 0;
    const rebinding: Resolver = () => {
      calls += 1;
      return Promise.resolve([{ address: calls === 1 ? '127.0.0.1' : '169.254.169.254', family: 4 }]);
    };
    const rebound = clientWith({ resolver: rebinding });
    try {
      const answer = await rebound.fetch(get(`http://rebind.test:${api.port}/hello`), ctx([`rebind.test:${api.port}`]));
      expect(answer.status).toBe(201);
      expect(calls).toBe(1);
    } finally {
      await rebound.close();
    }
  });
});

describe('redirects', () => {
  const to = (target: string, status = 302): string =>
    `http://api.test:${api.port}/redirect?status=${status}&to=${encodeURIComponent(target)}`;

  it('follows one to an allowed host and says so', async () => {
    const answer = await client.fetch(
      get(to(`http://other.test:${api.port}/hello`)),
      ctx([`api.test:${api.port}`, `other.test:${api.port}`]),
    );
    expect(answer).toMatchObject({ status: 201, redirected: true, url: `http://other.test:${api.port}/hello` });
    expect(records.map((record) => [record.host, record.status])).toEqual([
      [`api.test:${api.port}`, 302],
      [`other.test:${api.port}`, 201],
    ]);
  });

  it.each([
    ['http://10.0.0.1/', '10.0.0.1', 'NETWORK_BLOCKED_ADDRESS'],
    ['http://internal.test/admin', 'internal.test', 'NETWORK_BLOCKED_ADDRESS'],
    ['http://169.254.169.254/latest/meta-data/', '169.254.169.254', 'NETWORK_BLOCKED_ADDRESS'],
    ['http://evil.test/', 'nothing.test', 'NETWORK_DENIED'],
    ['file:///etc/passwd', 'nothing.test', 'NETWORK_DENIED'],
  ])('checks every hop: a redirect to %s fails %s', async (target, listed, code) => {
    const error = await failure(client.fetch(get(to(target)), ctx([`api.test:${api.port}`, listed])));
    expect(error.code).toBe(code);
    expect(records.map((record) => record.outcome)).toEqual([
      'ok',
      code === 'NETWORK_DENIED' ? 'denied' : 'blocked_address',
    ]);
  });

  it('stops after 5 redirects', async () => {
    let url = `http://api.test:${api.port}/hello`;
    for (let hop = 0; hop < 6; hop++) url = to(url);
    const error = await failure(client.fetch(get(url), ctx([`api.test:${api.port}`])));
    expect(error.code).toBe('NETWORK_LIMIT');
    expect(records).toHaveLength(6);
    let five = `http://api.test:${api.port}/hello`;
    for (let hop = 0; hop < 5; hop++) five = to(five);
    expect((await client.fetch(get(five), ctx([`api.test:${api.port}`]))).status).toBe(201);
  });

  it("answers the 3xx as it is with redirect: 'manual'", async () => {
    const answer = await client.fetch(
      { ...get(to('http://evil.test/')), redirect: 'manual' },
      ctx([`api.test:${api.port}`]),
    );
    expect(answer).toMatchObject({ status: 302, redirected: false });
    expect(answer.headers).toContainEqual(['location', 'http://evil.test/']);
  });

  it('turns a POST into a GET without its body on 303, and keeps both on 307', async () => {
    const post = (url: string): EgressFetchRequest => ({
      url,
      method: 'POST',
      headers: [['content-type', 'text/plain']],
      body: new TextEncoder().encode('payload'),
    });
    const seeOther = await client.fetch(post(to('/hello', 303)), ctx([`api.test:${api.port}`]));
    expect(JSON.parse(new TextDecoder().decode(seeOther.body))).toMatchObject({ method: 'GET', body: '' });
    const temporary = await client.fetch(post(to('/hello', 307)), ctx([`api.test:${api.port}`]));
    expect(JSON.parse(new TextDecoder().decode(temporary.body))).toMatchObject({ method: 'POST', body: 'payload' });
  });

  it('drops credentials and secret-bearing headers when a redirect leaves the origin, and keeps them within it', async () => {
    const headers: [string, string][] = [
      ['authorization', 'Bearer sk-secret-value'],
      ['cookie', 'session=1'],
      ['x-api-key', 'sk-secret-value'],
      ['x-plain', 'kept'],
    ];
    const allow = [`api.test:${api.port}`, `other.test:${api.port}`];
    const secrets = ['sk-secret-value'];
    const away = await client.fetch(
      get(to(`http://other.test:${api.port}/echo-headers`), headers),
      ctx(allow, { secrets }),
    );
    const awayHeaders = JSON.parse(new TextDecoder().decode(away.body)).headers;
    expect(awayHeaders).toMatchObject({ 'x-plain': 'kept' });
    expect(awayHeaders).not.toHaveProperty('authorization');
    expect(awayHeaders).not.toHaveProperty('cookie');
    expect(awayHeaders).not.toHaveProperty('x-api-key');
    const same = await client.fetch(get(to('/echo-headers'), headers), ctx(allow, { secrets }));
    expect(JSON.parse(new TextDecoder().decode(same.body)).headers).toMatchObject({
      authorization: 'Bearer sk-secret-value',
      'x-api-key': 'sk-secret-value',
    });
  });
});

describe('limits', () => {
  it('cuts a 1 GiB response at the cap without reading the rest (memory stays flat)', async () => {
    let written = 0;
    const huge = await serve((_req, res) => {
      const chunk = Buffer.alloc(64 * 1024, 120);
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      const pump = (): void => {
        while (written < 1024 ** 3) {
          written += chunk.length;
          if (!res.write(chunk)) {
            res.once('drain', pump);
            return;
          }
        }
        res.end();
      };
      res.on('close', () => res.removeAllListeners('drain'));
      pump();
    });
    const heapBefore = process.memoryUsage().heapUsed;
    const error = await failure(client.fetch(get(`http://api.test:${huge.port}/`), ctx([`api.test:${huge.port}`])));
    expect(error.code).toBe('NETWORK_TOO_LARGE');
    expect(records).toEqual([expect.objectContaining({ outcome: 'too_large', status: 200 })]);
    // What the server got into its socket before the client hung up: kernel buffers' worth, not the gigabyte.
    expect(written).toBeLessThan(64 * 1024 * 1024);
    expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(64 * 1024 * 1024);
  });

  it('refuses a declared Content-Length over the cap before reading the body', async () => {
    const declared = await serve((_req, res) => {
      res.writeHead(200, { 'content-length': String(1024 ** 3) });
      res.write('x');
    });
    const error = await failure(
      client.fetch(get(`http://api.test:${declared.port}/`), ctx([`api.test:${declared.port}`])),
    );
    expect(error.code).toBe('NETWORK_TOO_LARGE');
  });

  it('ends a response that never ends at its timeout, and at the invocation deadline', async () => {
    const endless = await serve((_req, res) => {
      res.writeHead(200);
      res.write('started');
    });
    const own = await failure(
      client.fetch({ ...get(`http://api.test:${endless.port}/`), timeoutMs: 200 }, ctx([`api.test:${endless.port}`])),
    );
    expect(own.code).toBe('NETWORK_TIMEOUT');
    const deadline = await failure(
      client.fetch(
        get(`http://api.test:${endless.port}/`),
        ctx([`api.test:${endless.port}`], { deadline: Date.now() + 200 }),
      ),
    );
    expect(deadline.code).toBe('NETWORK_TIMEOUT');
    const spent = await failure(
      client.fetch(
        get(`http://api.test:${endless.port}/`),
        ctx([`api.test:${endless.port}`], { deadline: Date.now() - 1 }),
      ),
    );
    expect(spent.code).toBe('NETWORK_TIMEOUT');
    expect(records.map((record) => record.outcome)).toEqual(['timeout', 'timeout', 'timeout']);
  });

  it('bounds 1,000 parallel requests: 50 made, at most 10 at once, the rest NETWORK_LIMIT', async () => {
    const slow = await serve((_req, res) => {
      setTimeout(() => res.end('ok'), 20);
    });
    const context = ctx([`api.test:${slow.port}`]);
    // Every fetch listens on the one signal they share until it settles.
    setMaxListeners(2_000, context.signal);
    const settled = await Promise.allSettled(
      Array.from({ length: 1_000 }, () => client.fetch(get(`http://api.test:${slow.port}/`), context)),
    );
    const ok = settled.filter((result) => result.status === 'fulfilled');
    const codes = settled.flatMap((result) =>
      result.status === 'rejected' ? [(result.reason as EgressError).code] : [],
    );
    expect(ok).toHaveLength(50);
    expect(codes).toHaveLength(950);
    expect(new Set(codes)).toEqual(new Set(['NETWORK_LIMIT']));
    expect(slow.seen).toHaveLength(50);
    expect(slow.maxOpen).toBeLessThanOrEqual(10);
  });

  it('aborts a request in flight when the signal fires, and the server sees the connection go', async () => {
    let arrived: () => void = () => undefined;
    const reached = new Promise<void>((resolve) => (arrived = resolve));
    let closed: () => void = () => undefined;
    const hungUp = new Promise<void>((resolve) => (closed = resolve));
    const hanging = await serve((req) => {
      req.socket.on('close', () => closed());
      arrived();
    });
    const controller = new AbortController();
    const pending = client.fetch(
      get(`http://api.test:${hanging.port}/`),
      ctx([`api.test:${hanging.port}`], { signal: controller.signal }),
    );
    await reached;
    controller.abort();
    const error = await failure(pending);
    expect(error.code).toBe('NETWORK_ABORTED');
    await hungUp;
    expect(records).toEqual([expect.objectContaining({ outcome: 'aborted' })]);
    // Aborted before it starts: refused at once.
    const early = await failure(
      client.fetch(
        get(`http://api.test:${hanging.port}/`),
        ctx([`api.test:${hanging.port}`], { signal: controller.signal }),
      ),
    );
    expect(early.code).toBe('NETWORK_ABORTED');
  });
});

describe('secrets', () => {
  it('never sends a secret to a host the tool does not list, in a URL, a header or a body', async () => {
    const before = api.seen.length;
    const secrets = ['sk-live-0123456789'];
    const attempts: EgressFetchRequest[] = [
      get(`http://other.test:${api.port}/hello?key=sk-live-0123456789`),
      get(`http://other.test:${api.port}/hello`, [['authorization', 'Bearer sk-live-0123456789']]),
      {
        ...get(`http://other.test:${api.port}/hello`),
        method: 'POST',
        body: new TextEncoder().encode('{"k":"sk-live-0123456789"}'),
      },
    ];
    for (const attempt of attempts) {
      const error = await failure(client.fetch(attempt, ctx([`api.test:${api.port}`], { secrets })));
      expect(error.code).toBe('NETWORK_DENIED');
    }
    expect(api.seen.length).toBe(before);
    // Records keep no header or body, and no query value.
    expect(JSON.stringify(records)).not.toContain('sk-live');
  });
});
