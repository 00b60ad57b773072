import {
  toolNameOf,
  type AnthropicToolDefinition,
  type McpToolDefinition,
  type OpenAiToolDefinition,
  type PiToolDefinition,
  type ToolListFormat,
} from '@toolhost/contracts';
import type { RegistryTool } from '../registry/registry.client';

export type ToolDefinition = OpenAiToolDefinition | AnthropicToolDefinition | McpToolDefinition | PiToolDefinition;

/**
 * One tool in the shape each agent framework expects, every one built from the same record; the name is always
 * `custom_<id>` (43 characters of `[a-z0-9_-]`, within OpenAI's `^[a-zA-Z0-9_-]{1,64}$`).
 */
export class ToolFormatMapper {
  /** Keyed by the format list itself, so a format added there does not compile until it has a mapper here. */
  private static readonly mappers: Readonly<Record<ToolListFormat, (tool: RegistryTool) => ToolDefinition>> = {
    openai: (tool) => ToolFormatMapper.openai(tool),
    anthropic: (tool) => ToolFormatMapper.anthropic(tool),
    mcp: (tool) => ToolFormatMapper.mcp(tool),
    pi: (tool) => ToolFormatMapper.pi(tool),
  };

  static map(format: ToolListFormat, tool: RegistryTool): ToolDefinition {
    return ToolFormatMapper.mappers[format](tool);
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

  /** pi's `registerTool` definition without `execute` (the gateway runs it): `label` is the title. */
  static pi(tool: RegistryTool): PiToolDefinition {
    return {
      name: toolNameOf(tool.id),
      label: tool.title,
      description: tool.description,
      parameters: tool.inputSchema,
    };
  }
}
