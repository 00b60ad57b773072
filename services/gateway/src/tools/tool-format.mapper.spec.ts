import { TOOL_LIST_FORMATS } from '@toolhost/contracts';
import type { RegistryTool } from '../registry/registry.client';
import { ToolFormatMapper } from './tool-format.mapper';

const tool: RegistryTool = {
  id: '22222222-2222-4222-8222-222222222222',
  tenantId: 't',
  title: 'Slug Generator',
  description: 'Turns a title into a URL slug',
  inputSchema: { type: 'object', properties: { title: { type: 'string' } }, required: ['title'] },
  status: 'active',
  disabledReason: null,
  version: 1,
};
const name = 'custom_22222222-2222-4222-8222-222222222222';

describe('ToolFormatMapper', () => {
  it('maps to the OpenAI function form', () => {
    expect(ToolFormatMapper.map('openai', tool)).toEqual({
      type: 'function',
      function: { name, description: tool.description, parameters: tool.inputSchema },
    });
  });

  it('maps to the Anthropic tool form', () => {
    expect(ToolFormatMapper.map('anthropic', tool)).toEqual({
      name,
      description: tool.description,
      input_schema: tool.inputSchema,
    });
  });

  it('maps to the MCP tool form', () => {
    expect(ToolFormatMapper.map('mcp', tool)).toEqual({
      name,
      title: tool.title,
      description: tool.description,
      inputSchema: tool.inputSchema,
    });
  });

  it('adds the outputSchema to the MCP form when the tool has one', () => {
    const outputSchema = { type: 'object', properties: { slug: { type: 'string' } } };
    expect(ToolFormatMapper.mcp({ ...tool, outputSchema })).toEqual({
      name,
      title: tool.title,
      description: tool.description,
      inputSchema: tool.inputSchema,
      outputSchema,
    });
    expect(ToolFormatMapper.mcp({ ...tool, outputSchema: null })).not.toHaveProperty('outputSchema');
  });

  it('decides every format of the one format list: all served but pi, which refuses to map', () => {
    expect(TOOL_LIST_FORMATS.filter((format) => ToolFormatMapper.serves(format))).toEqual([
      'openai',
      'anthropic',
      'mcp',
    ]);
    expect(() => ToolFormatMapper.map('pi', tool)).toThrow('not served');
  });

  it('keeps names within the OpenAI function-name pattern', () => {
    expect(name).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
  });
});
