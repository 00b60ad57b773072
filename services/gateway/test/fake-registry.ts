import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { defined } from '../../../test/support/defined';

/** A tool as the registry's internal API answers it (the fields the gateway reads, plus a few it ignores). */
export interface FakeTool {
  id: string;
  tenantId: string;
  title: string;
  description: string;
  inputSchema: Record<string, unknown>;
  status: 'active' | 'disabled';
  disabledReason: string | null;
  version: number;
  /** Older versions' schemas, by version. */
  versions?: Record<number, Record<string, unknown>>;
}

export interface FakeKey {
  keyId: string;
  tenantId: string;
  scopes: string[];
}

/**
 * Stands in for the registry's internal API only (`/internal/v1/...`, bearer token), so gateway tests do not
 * depend on the registry's database: keys, tools and versions live in maps the test fills in.
 */
export class FakeRegistry {
  readonly keys = new Map<string, FakeKey>();
  readonly tools = new Map<string, FakeTool>();
  /** Requests seen, by route kind; tests assert on caching through these. */
  readonly calls = { verify: 0, tool: 0, version: 0, list: 0 };
  private server?: Server;
  url = '';

  constructor(readonly token: string) {}

  /** Listens on a free port, or on the port it had before (a restart after `close`). */
  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      this.handle(req, res).catch(() => this.send(res, 500, { error: 'fake registry failed' }));
    });
    const port = this.url ? Number(new URL(this.url).port) : 0;
    await new Promise<void>((resolve) => this.server?.listen(port, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === '/health/live') {
      this.send(res, 200, { status: 'ok' });
      return;
    }
    if (req.headers.authorization !== `Bearer ${this.token}`) {
      this.send(res, 401, { error: 'bad token' });
      return;
    }
    let match: RegExpExecArray | null;
    if (req.method === 'POST' && url.pathname === '/internal/v1/keys/verify') {
      this.calls.verify += 1;
      const body = JSON.parse(await readBody(req)) as { key?: string };
      const key = body.key === undefined ? undefined : this.keys.get(body.key);
      if (key) this.send(res, 200, key);
      else this.send(res, 401, { error: 'unknown key' });
      return;
    }
    if ((match = /^\/internal\/v1\/tools\/([^/]+)$/.exec(url.pathname))) {
      this.calls.tool += 1;
      const tool = this.tools.get(defined(match[1], 'the tool id'));
      if (tool) this.send(res, 200, record(tool));
      else this.send(res, 404, { error: 'not found' });
      return;
    }
    if ((match = /^\/internal\/v1\/tools\/([^/]+)\/versions\/(\d+)$/.exec(url.pathname))) {
      this.calls.version += 1;
      const tool = this.tools.get(defined(match[1], 'the tool id'));
      const version = Number(match[2]);
      const schema = tool?.versions?.[version] ?? (tool?.version === version ? tool.inputSchema : undefined);
      if (!tool || !schema) this.send(res, 404, { error: 'not found' });
      else this.send(res, 200, { ...record(tool), version, inputSchema: schema, secrets: { TOKEN: 'never-leaves' } });
      return;
    }
    if ((match = /^\/internal\/v1\/tenants\/([^/]+)\/tools$/.exec(url.pathname))) {
      this.calls.list += 1;
      const items = [...this.tools.values()].filter((tool) => tool.tenantId === match?.[1]).map(record);
      this.send(res, 200, { items });
      return;
    }
    this.send(res, 404, { error: 'no route' });
  }

  private send(res: ServerResponse, status: number, body: unknown): void {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  }
}

function record(tool: FakeTool): Record<string, unknown> {
  const { versions: _versions, ...rest } = tool;
  return { ...rest, toolName: `custom_${tool.id}`, code: 'return 1', outputSchema: null, allowedTools: null };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => resolve(body));
    req.on('error', reject);
  });
}
