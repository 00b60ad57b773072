import {
  toolNameOf,
  type AnthropicToolDefinition,
  type McpToolDefinition,
  type OpenAiToolDefinition,
  type ToolListFormat,
} from '@toolhost/contracts';
import type { RegistryTool } from '../registry/registry.client';

export type ToolDefinition = OpenAiToolDefinition | AnthropicToolDefinition | McpToolDefinition;

/** One tool in the shape each agent framework expects; the name is always `custom_<id>`. */
export class ToolFormatMapper {
  /**
   * Every listing format with its mapper, or null while it is not served (`pi` arrives with the interfaces issue).
   * Keyed by the format list itself, so a format added there does not compile until it is decided here.
   */
  private static readonly mappers: Readonly<Record<ToolListFormat, ((tool: RegistryTool) => ToolDefinition) | null>> = {
    openai: (tool) => ToolFormatMapper.openai(tool),
    anthropic: (tool) => ToolFormatMapper.anthropic(tool),
    mcp: (tool) => ToolFormatMapper.mcp(tool),
    pi: null,
  };

  static serves(format: ToolListFormat): boolean {
    return ToolFormatMapper.mappers[format] !== null;
  }

  /** Throws for a format that is not served (check `serves` first). */
  static map(format: ToolListFormat, tool: RegistryTool): ToolDefinition {
    const mapper = ToolFormatMapper.mappers[format];
    if (!mapper) throw new Error(`listing format "${format}" is not served`);
    return mapper(tool);
  }

  static openai(tool: RegistryTool): OpenAiToolDefinition {
    return {
      type: 'function',
      function: { name: toolNameOf(tool.id), description: tool.description, parameters: tool.inputSchema },
    };
  }

  static anthropic(tool: RegistryTool): AnthropicToolDefinition {
    return { name: toolNameOf(tool.id), description: tool.description, input_schema: tool.inputSchema };
  }

  static mcp(tool: RegistryTool): McpToolDefinition {
    return {
      name: toolNameOf(tool.id),
      title: tool.title,
      description: tool.description,
      inputSchema: tool.inputSchema,
      ...(tool.outputSchema ? { outputSchema: tool.outputSchema } : {}),
    };
  }
}
