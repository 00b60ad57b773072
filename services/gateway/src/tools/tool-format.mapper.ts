import {
  toolNameOf,
  type AnthropicToolDefinition,
  type McpToolDefinition,
  type OpenAiToolDefinition,
} from '@toolhost/contracts';
import type { RegistryTool } from '../registry/registry.client';

export type ToolDefinition = OpenAiToolDefinition | AnthropicToolDefinition | McpToolDefinition;

/** One tool in the shape each agent framework expects; the name is always `custom_<id>`. */
export class ToolFormatMapper {
  static map(format: 'openai' | 'anthropic' | 'mcp', tool: RegistryTool): ToolDefinition {
    switch (format) {
      case 'openai':
        return ToolFormatMapper.openai(tool);
      case 'anthropic':
        return ToolFormatMapper.anthropic(tool);
      case 'mcp':
        return ToolFormatMapper.mcp(tool);
    }
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
    };
  }
}
