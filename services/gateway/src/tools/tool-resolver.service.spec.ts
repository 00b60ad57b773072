import { randomUUID } from 'node:crypto';
import type { GatewayMetrics } from '../metrics/gateway-metrics';
import type { RegistryClient, RegistryTool } from '../registry/registry.client';
import { ToolResolver } from './tool-resolver.service';

const metrics = { cacheLookup: () => undefined } as unknown as GatewayMetrics;

function registryWith(tools: Map<string, RegistryTool>): RegistryClient & { calls: number } {
  const registry = {
    calls: 0,
    getTool: (id: string) => {
      registry.calls += 1;
      return Promise.resolve(tools.get(id));
    },
  };
  return registry as unknown as RegistryClient & { calls: number };
}

describe('ToolResolver', () => {
  const tenantId = randomUUID();

  it('remembers a missing tool until a tool-changed event for its id', async () => {
    const tools = new Map<string, RegistryTool>();
    const registry = registryWith(tools);
    const resolver = new ToolResolver(registry, metrics, 60_000);
    const id = randomUUID();
    await expect(resolver.resolve(tenantId, `custom_${id}`)).rejects.toMatchObject({ code: 'TOOL_NOT_FOUND' });
    await expect(resolver.resolve(tenantId, `custom_${id}`)).rejects.toMatchObject({ code: 'TOOL_NOT_FOUND' });
    expect(registry.calls).toBe(1);

    tools.set(id, {
      id,
      tenantId,
      title: 't',
      description: 'd',
      inputSchema: { type: 'object' },
      status: 'active',
      disabledReason: null,
      version: 1,
    });
    resolver.invalidate(id);
    await expect(resolver.resolve(tenantId, id)).resolves.toMatchObject({ toolId: id, version: 1 });
    expect(registry.calls).toBe(2);
  });

  it('asks the registry every time with the cache off', async () => {
    const registry = registryWith(new Map());
    const resolver = new ToolResolver(registry, metrics, 60_000, false);
    const id = randomUUID();
    for (let i = 0; i < 2; i++)
      await expect(resolver.resolve(tenantId, id)).rejects.toMatchObject({ code: 'TOOL_NOT_FOUND' });
    expect(registry.calls).toBe(2);
  });
});
