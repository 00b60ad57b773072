/**
 * The tenant-isolation matrix: every `/v1` route of the registry and the gateway (and the gateway's `/mcp`) × (own
 * id, another tenant's id, a missing id) × (each scope, no key) gives the contract's answer: no key 401, a key
 * without the route's scope 403, another tenant's id exactly what a missing id gets (never a 2xx), and no answer
 * to tenant A ever names one of tenant B's ids. Generated from docs/openapi/*.json: a route added there is in the
 * matrix, and one whose scope this file cannot tell fails it until it is named below.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../../scripts/project-root';
import { Stack } from '../e2e/stack';

const root = projectRoot(__dirname);
type Scope = 'tools:read' | 'tools:write' | 'invoke' | 'admin' | 'any';
const SCOPES = ['tools:read', 'tools:write', 'invoke'] as const;

interface Operation {
  service: 'registry' | 'gateway';
  method: string;
  path: string;
  scope: Scope | undefined;
  params: string[];
  bodyHasTool: boolean;
  /** Its documented answers include 403: some key lacks what it asks. Without (DELETE /mcp: 405), every key may. */
  scoped: boolean;
}

/** The gateway's document says "bearer" (one scheme for every key); the scope each route asks is named here. */
const GATEWAY_SCOPES: Record<string, Scope> = {
  'POST /v1/invocations': 'invoke',
  'GET /v1/invocations/{id}': 'invoke',
  'GET /v1/tools': 'tools:read',
  'POST /v1/tools/{id}/test': 'tools:write',
  'GET /mcp': 'tools:read',
  'POST /mcp': 'tools:read',
};

interface Document {
  paths: Record<
    string,
    Record<
      string,
      {
        security?: Record<string, string[]>[];
        parameters?: { in: string; name: string }[];
        responses?: Record<string, unknown>;
        requestBody?: { content?: Record<string, { schema?: { $ref?: string } }> };
      }
    >
  >;
  components?: { schemas?: Record<string, { properties?: Record<string, unknown> }> };
}

function operations(service: 'registry' | 'gateway'): Operation[] {
  const document = JSON.parse(readFileSync(join(root, 'docs', 'openapi', `${service}.json`), 'utf8')) as Document;
  const found: Operation[] = [];
  for (const [path, methods] of Object.entries(document.paths)) {
    // Tenant-facing routes only: health and metrics are open, /internal takes the services' own token.
    if (!path.startsWith('/v1/') && path !== '/mcp') continue;
    for (const [method, operation] of Object.entries(methods)) {
      const name = `${method.toUpperCase()} ${path}`;
      const schemes = operation.security?.[0] ?? {};
      const scoped = operation.responses?.['403'] !== undefined;
      const scope: Scope | undefined =
        'adminKey' in schemes ? 'admin' : ((schemes.tenantKey?.[0] as Scope | undefined) ?? GATEWAY_SCOPES[name]);
      const ref = Object.values(operation.requestBody?.content ?? {})[0]
        ?.schema?.$ref?.split('/')
        .pop();
      const bodySchema = ref === undefined ? undefined : document.components?.schemas?.[ref];
      found.push({
        service,
        method: method.toUpperCase(),
        path,
        scope: scoped ? scope : 'any',
        scoped,
        params: (operation.parameters ?? []).filter((p) => p.in === 'path').map((p) => p.name),
        bodyHasTool: bodySchema?.properties?.tool !== undefined,
      });
    }
  }
  return found;
}

interface Tenant {
  tenantId: string;
  keys: Record<(typeof SCOPES)[number] | 'admin' | 'all', string>;
  toolId: string;
  toolName: string;
  invocationId: string;
}

describe('tenant isolation matrix (reliability)', () => {
  let stack: Stack;
  let a: Tenant;
  let b: Tenant;

  async function tenant(name: string): Promise<Tenant> {
    const { tenantId, key } = await stack.tenant(name);
    const keys: Record<string, string> = { all: key, admin: stack.adminKey };
    for (const scope of SCOPES) {
      const made = await stack.registry('POST', `/v1/tenants/${tenantId}/keys`, stack.adminKey, {
        name: scope,
        scopes: [scope],
      });
      keys[scope] = made.body.key;
    }
    const tool = await stack.createTool(key, {
      title: `echo ${name}`,
      description: 'echo',
      inputSchema: { type: 'object' },
      code: 'return input;',
    });
    const invoked = await stack.invoke(key, { tool: tool.toolName, input: {} });
    if (invoked.status !== 200) throw new Error(`invoke: ${invoked.status}`);
    return {
      tenantId,
      keys: keys,
      toolId: tool.id,
      toolName: tool.toolName,
      invocationId: invoked.body.id,
    };
  }

  beforeAll(async () => {
    stack = await new Stack().start();
    a = await tenant('a');
    b = await tenant('b');
  }, 180_000);

  // Set by a before hook that may have failed before assigning it: close only what started.
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- see above
  afterAll(() => stack?.stop(), 60_000);

  it('gives every route × id × key the contract answer', async () => {
    const all = [...operations('registry'), ...operations('gateway')];
    // A route whose scope nobody can tell is a route the matrix would skip: it fails here instead.
    expect(all.filter((op) => op.scope === undefined).map((op) => `${op.method} ${op.path}`)).toEqual([]);
    expect(all.length).toBeGreaterThan(10);
    // A tool deleted mid-matrix would turn later "own" answers into 404s: deletes go last.
    all.sort((x, y) => Number(x.method === 'DELETE') - Number(y.method === 'DELETE'));

    const idOf = (owner: Tenant | 'missing', param: string, path: string): string => {
      if (owner === 'missing') return param === 'version' ? '999' : randomUUID();
      if (param === 'tenantId') return owner.tenantId;
      if (param === 'version') return '1';
      return path.startsWith('/v1/invocations') ? owner.invocationId : owner.toolId;
    };
    const bIds = [b.toolId, b.tenantId, b.invocationId, b.toolName];
    const problems: string[] = [];
    let sent = 0;
    const send = async (
      op: Operation,
      owner: Tenant | 'missing' | undefined,
      key: string | undefined,
    ): Promise<{ status: number; code: string; text: string }> => {
      let path = op.path;
      for (const param of op.params) path = path.replace(`{${param}}`, idOf(owner ?? a, param, op.path));
      const toolName =
        owner === undefined ? a.toolName : owner === 'missing' ? `custom_${randomUUID()}` : owner.toolName;
      const body = ['GET', 'DELETE'].includes(op.method)
        ? undefined
        : op.path === '/mcp'
          ? { jsonrpc: '2.0', id: 1, method: 'tools/list' }
          : op.bodyHasTool
            ? { tool: toolName, input: {} }
            : ['POST', 'PATCH', 'PUT'].includes(op.method)
              ? {}
              : undefined;
      const base = op.service === 'registry' ? stack.registryUrl : stack.gatewayUrl;
      const headers: Record<string, string> =
        op.path === '/mcp' ? { accept: 'application/json, text/event-stream' } : {};
      const response = await fetch(base + path, {
        method: op.method,
        headers: {
          ...(key ? { authorization: `Bearer ${key}` } : {}),
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...headers,
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(30_000),
      });
      sent += 1;
      // An MCP stream (GET /mcp) stays open: its status is the answer.
      if ((response.headers.get('content-type') ?? '').includes('text/event-stream')) {
        await response.body?.cancel();
        return { status: response.status, code: '', text: '' };
      }
      const text = await response.text();
      let code = '';
      try {
        code = (JSON.parse(text) as { error?: { code?: string } }).error?.code ?? '';
      } catch {
        // not JSON (an event stream)
      }
      return { status: response.status, code, text };
    };

    for (const op of all) {
      const name = `${op.service} ${op.method} ${op.path}`;
      const variants: (Tenant | 'missing' | undefined)[] =
        op.params.length > 0 || op.bodyHasTool ? [a, b, 'missing'] : [undefined];
      for (const owner of variants) {
        const label = `${name} [${owner === undefined ? '-' : owner === 'missing' ? 'missing' : owner === a ? 'own' : 'other'}]`;
        const anonymous = await send(op, owner, undefined);
        if (anonymous.status !== 401) problems.push(`${label} no key: ${anonymous.status}, expected 401`);
      }
      for (const scope of [...SCOPES, 'admin' as const]) {
        const key = a.keys[scope];
        const allowed = scope === op.scope || (op.scope === 'any' && scope !== 'admin');
        const answers = new Map<string, { status: number; code: string; text: string }>();
        for (const owner of variants) {
          const which = owner === undefined ? '-' : owner === 'missing' ? 'missing' : owner === a ? 'own' : 'other';
          const answer = await send(op, owner, key);
          answers.set(which, answer);
          const label = `${name} [${which}] ${scope}`;
          if (!allowed) {
            // The admin key is no tenant's key: on a tenant's route it is refused like a key without the scope.
            const refused = scope === 'admin' && op.scope !== 'admin' ? [401, 403, 405] : [403];
            if (!refused.includes(answer.status)) problems.push(`${label}: ${answer.status}, expected 403`);
            continue;
          }
          if (which === 'own' || which === '-') {
            if ([401, 403, 404].includes(answer.status) || answer.status >= 500) {
              problems.push(`${label}: ${answer.status} ${answer.code} on its own id`);
            }
          }
          if (which === 'missing' && answer.status !== 404 && answer.status !== 400) {
            problems.push(`${label}: ${answer.status} for a missing id, expected 404`);
          }
          if (which !== 'other' && scope !== 'admin' && bIds.some((id) => answer.text.includes(id))) {
            problems.push(`${label}: the answer names one of another tenant's ids`);
          }
        }
        const other = answers.get('other');
        const missing = answers.get('missing');
        if (allowed && other && missing && (other.status !== missing.status || other.code !== missing.code)) {
          problems.push(
            `${name} ${scope}: another tenant's id answers ${other.status} ${other.code}, a missing one ${missing.status} ${missing.code}`,
          );
        }
      }
    }
    process.stdout.write(
      `[reliability] tenant isolation: ${all.length} routes, ${sent} requests, ${problems.length} problems\n`,
    );
    expect(problems).toEqual([]);
  }, 300_000);
});
