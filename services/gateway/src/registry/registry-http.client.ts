import { SCOPES, type JsonObject, type Scope, type ToolStatus } from '@toolhost/contracts';
import type { Principal } from '../auth/principal';
import {
  RegistryUnavailableError,
  type RegistryClient,
  type RegistryTool,
  type RegistryToolVersion,
} from './registry.client';

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function str(record: Record<string, unknown>, key: string): string {
  const value = record[key];
  if (typeof value !== 'string') throw new RegistryUnavailableError(`registry answer lacks string "${key}"`);
  return value;
}

function int(record: Record<string, unknown>, key: string): number {
  const value = record[key];
  if (typeof value !== 'number' || !Number.isInteger(value)) {
    throw new RegistryUnavailableError(`registry answer lacks integer "${key}"`);
  }
  return value;
}

function schemaOf(record: Record<string, unknown>): JsonObject {
  const value = record.inputSchema;
  if (!isObject(value)) throw new RegistryUnavailableError('registry answer lacks "inputSchema"');
  return value as JsonObject;
}

function parseTool(value: unknown): RegistryTool {
  if (!isObject(value)) throw new RegistryUnavailableError('registry answered a tool that is not an object');
  const status = str(value, 'status');
  if (status !== 'active' && status !== 'disabled') {
    throw new RegistryUnavailableError(`registry answered unknown tool status "${status}"`);
  }
  return {
    id: str(value, 'id'),
    tenantId: str(value, 'tenantId'),
    title: str(value, 'title'),
    description: typeof value.description === 'string' ? value.description : '',
    inputSchema: schemaOf(value),
    outputSchema: isObject(value.outputSchema) ? (value.outputSchema as JsonObject) : null,
    status: status satisfies ToolStatus,
    disabledReason: typeof value.disabledReason === 'string' ? value.disabledReason : null,
    version: int(value, 'version'),
  };
}

function parsePrincipal(value: unknown): Principal {
  if (!isObject(value) || !Array.isArray(value.scopes)) {
    throw new RegistryUnavailableError('registry answered an unreadable key verification');
  }
  const scopes = value.scopes.filter((scope): scope is Scope => (SCOPES as readonly unknown[]).includes(scope));
  return { tenantId: str(value, 'tenantId'), keyId: str(value, 'keyId'), scopes };
}

/**
 * The registry's internal HTTP API (`/internal/v1`, bearer INTERNAL_API_TOKEN). Plain `fetch` with a deadline
 * per call: the gateway must answer 503 quickly rather than hang on a slow registry.
 */
export class RegistryHttpClient implements RegistryClient {
  private readonly baseUrl: string;

  constructor(
    baseUrl: string,
    private readonly token: string | undefined,
    private readonly timeoutMs: number,
  ) {
    this.baseUrl = baseUrl.replace(/\/+$/, '');
  }

  async verifyKey(key: string): Promise<Principal | undefined> {
    const body = await this.call('POST', '/internal/v1/keys/verify', { key }, [401]);
    return body === undefined ? undefined : parsePrincipal(body);
  }

  async getTool(toolId: string): Promise<RegistryTool | undefined> {
    const body = await this.call('GET', `/internal/v1/tools/${encodeURIComponent(toolId)}`, undefined, [404]);
    return body === undefined ? undefined : parseTool(body);
  }

  async getToolVersion(toolId: string, version: number): Promise<RegistryToolVersion | undefined> {
    const path = `/internal/v1/tools/${encodeURIComponent(toolId)}/versions/${version}`;
    const body = await this.call('GET', path, undefined, [404]);
    if (body === undefined) return undefined;
    if (!isObject(body)) throw new RegistryUnavailableError('registry answered a version that is not an object');
    // Only the schema is kept: the version record also carries the tool's secrets, which the gateway never needs.
    return {
      id: str(body, 'id'),
      tenantId: str(body, 'tenantId'),
      version: int(body, 'version'),
      inputSchema: schemaOf(body),
    };
  }

  async listTools(tenantId: string): Promise<RegistryTool[]> {
    const body = await this.call('GET', `/internal/v1/tenants/${encodeURIComponent(tenantId)}/tools`, undefined, []);
    if (!isObject(body) || !Array.isArray(body.items)) {
      throw new RegistryUnavailableError('registry answered a tool list without "items"');
    }
    return body.items.map(parseTool);
  }

  async ping(): Promise<void> {
    await this.call('GET', '/health/live', undefined, [], false);
  }

  /** The parsed JSON answer; `undefined` for the statuses listed in `absent`; RegistryUnavailableError otherwise. */
  private async call(
    method: 'GET' | 'POST',
    path: string,
    body: unknown,
    absent: number[],
    authenticated = true,
  ): Promise<unknown> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (authenticated && this.token) headers.authorization = `Bearer ${this.token}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    let response: Response;
    try {
      response = await fetch(`${this.baseUrl}${path}`, {
        method,
        headers,
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (error) {
      throw new RegistryUnavailableError(
        `registry unreachable: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
    if (absent.includes(response.status)) {
      await response.body?.cancel();
      return undefined;
    }
    if (!response.ok) {
      await response.body?.cancel();
      throw new RegistryUnavailableError(
        `registry answered ${response.status} to ${method} ${path.split('/').slice(0, 4).join('/')}`,
      );
    }
    try {
      return await response.json();
    } catch {
      throw new RegistryUnavailableError(`registry answered non-JSON to ${method} ${path}`);
    }
  }
}
