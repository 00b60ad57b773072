// The low-level Server relays whatever the gateway's MCP server lists (the tenant's tools, not known up front), as the
// gateway's own MCP server does.
/* eslint-disable @typescript-eslint/no-deprecated -- see above */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import type { CliTarget } from './api-client';

/**
 * `toolhost mcp`: an MCP server on stdio for desktop clients that speak only stdio, forwarding `tools/list` and
 * `tools/call` to the gateway's `/mcp` (Streamable HTTP, the tenant's key), and the gateway's tool-list changes back.
 * Resolves when stdin closes.
 */
export async function serveMcp(target: CliTarget): Promise<void> {
  const client = new Client({ name: 'toolhost-cli', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL('mcp', withSlash(target.gatewayUrl)), {
      requestInit: { headers: { authorization: `Bearer ${target.key}` } },
    }),
  );
  const server = new Server(
    { name: 'toolhost', version: '1.0.0' },
    { capabilities: { tools: { listChanged: true } }, instructions: client.getInstructions() ?? '' },
  );
  server.setRequestHandler(ListToolsRequestSchema, (request) =>
    client.listTools(request.params?.cursor === undefined ? {} : { cursor: request.params.cursor }),
  );
  server.setRequestHandler(CallToolRequestSchema, (request, extra) =>
    client.callTool(request.params, undefined, { signal: extra.signal }),
  );
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => server.sendToolListChanged());
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    process.stdin.once('end', () => resolve());
  });
  await server.connect(transport);
  await closed;
  await client.close();
}

const withSlash = (url: string): string => (url.endsWith('/') ? url : `${url}/`);
