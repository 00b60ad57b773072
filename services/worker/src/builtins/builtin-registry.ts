import type { BuiltinTool } from './builtin-tool';
import type { OperatorToolsClient } from './operator-tools.client';

/** Built-ins the worker serves itself, plus the operator's endpoint for every other non-custom name. */
export class BuiltinRegistry {
  private readonly local: Map<string, BuiltinTool>;

  constructor(
    tools: BuiltinTool[],
    readonly operator: OperatorToolsClient | undefined,
  ) {
    this.local = new Map(tools.map((tool) => [tool.name, tool]));
  }

  localTool(name: string): BuiltinTool | undefined {
    return this.local.get(name);
  }

  get localNames(): string[] {
    return [...this.local.keys()];
  }

  async close(): Promise<void> {
    await Promise.all([...this.local.values()].map((tool) => tool.close?.() ?? Promise.resolve()));
  }
}
