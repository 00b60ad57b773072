import type { InternalToolRecord, InternalToolVersion } from '@toolhost/contracts';
import { RegistryUnavailableError } from './registry-unavailable.error';

const REQUEST_TIMEOUT_MS = 5_000;

/** The registry's internal API, as the worker uses it. `undefined` means the registry says it does not exist. */
export class RegistryClient {
  constructor(
    private readonly baseUrl: string,
    private readonly token: string | undefined,
  ) {}

  getTool(id: string): Promise<InternalToolRecord | undefined> {
    return this.get<InternalToolRecord>(`/internal/v1/tools/${encodeURIComponent(id)}`);
  }

  getVersion(id: string, version: number): Promise<InternalToolVersion | undefined> {
    return this.get<InternalToolVersion>(`/internal/v1/tools/${encodeURIComponent(id)}/versions/${version}`);
  }

  private async get<T>(path: string): Promise<T | undefined> {
    let response: Response;
    try {
      response = await fetch(this.baseUrl + path, {
        headers: this.token ? { authorization: `Bearer ${this.token}` } : {},
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
    } catch (error) {
      throw new RegistryUnavailableError(`registry unreachable: ${error instanceof Error ? error.message : 'error'}`);
    }
    if (response.status === 404) return undefined;
    if (!response.ok) throw new RegistryUnavailableError(`registry answered ${response.status} for ${path}`);
    return (await response.json()) as T;
  }
}
