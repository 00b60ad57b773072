/** What the operational scripts (smoke:prod, ops:prometheus) do first on a running stack: a tenant, its key, a tool. */

/** POSTs JSON with a bearer key; the answer's JSON, or an error naming the status and body. Bounded to 30 s. */
export async function postJson(url: string, key: string, body: unknown): Promise<Record<string, unknown>> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  const answer = (await response.json()) as Record<string, unknown>;
  if (!response.ok) throw new Error(`POST ${url}: ${response.status} ${JSON.stringify(answer)}`);
  return answer;
}

/** A new tenant (named `name`), a key with every scope, and an "Add numbers" tool; its key and tool name. */
export async function createDemoTool(
  registryUrl: string,
  adminKey: string,
  name: string,
): Promise<{ key: string; toolName: string }> {
  const tenant = await postJson(`${registryUrl}/v1/tenants`, adminKey, { name });
  const key = await postJson(`${registryUrl}/v1/tenants/${String(tenant.id)}/keys`, adminKey, {
    name,
    scopes: ['tools:read', 'tools:write', 'invoke'],
  });
  const tool = await postJson(`${registryUrl}/v1/tools`, String(key.key), {
    title: 'Add numbers',
    description: 'Adds a and b',
    inputSchema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } } },
    code: 'export async function handle(input) {\n  return { sum: input.a + input.b };\n}',
  });
  return { key: String(key.key), toolName: String(tool.toolName) };
}
