// Messages between PiToolDiscovery and the child it forks for one discovery (pi-discovery.child.ts), over IPC.
import { ErrorCode } from '@toolhost/contracts';
import { registrationsOf } from './pi-registrations';
import type { PiDiscovery, PiDiscoveryRequest } from './sandbox.types';

/** Parent → child, once the child is ready: the module, its limits, and the RSS past which the child gives up. */
export interface DiscoveryJob {
  type: 'discover';
  request: PiDiscoveryRequest;
  maxRssBytes: number;
}

/** Child → parent: loaded and waiting for its job, then the one answer. */
export type DiscoveryChildMessage = { type: 'ready' } | { type: 'answer'; discovery: PiDiscovery };

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export function parseDiscoveryJob(raw: unknown): DiscoveryJob | undefined {
  if (!isRecord(raw) || raw.type !== 'discover' || typeof raw.maxRssBytes !== 'number') return undefined;
  const request = raw.request;
  if (
    !isRecord(request) ||
    typeof request.tenantId !== 'string' ||
    typeof request.code !== 'string' ||
    typeof request.timeoutMs !== 'number' ||
    typeof request.memoryMb !== 'number'
  ) {
    return undefined;
  }
  return {
    type: 'discover',
    request: {
      tenantId: request.tenantId,
      code: request.code,
      timeoutMs: request.timeoutMs,
      memoryMb: request.memoryMb,
    },
    maxRssBytes: raw.maxRssBytes,
  };
}

const isErrorCode = (value: unknown): value is ErrorCode =>
  typeof value === 'string' && Object.values<string>(ErrorCode).includes(value);

function discoveryOf(raw: Record<string, unknown>): PiDiscovery | undefined {
  if (raw.status === 'discovered') {
    const registrations = registrationsOf(raw.registrations);
    return registrations === undefined ? undefined : { status: 'discovered', registrations };
  }
  const error = raw.error;
  if (raw.status !== 'failed' || !isRecord(error) || !isErrorCode(error.code) || typeof error.message !== 'string') {
    return undefined;
  }
  return { status: 'failed', error: { code: error.code, message: error.message } };
}

export function parseChildMessage(raw: unknown): DiscoveryChildMessage | undefined {
  if (!isRecord(raw)) return undefined;
  if (raw.type === 'ready') return { type: 'ready' };
  const discovery = raw.type === 'answer' && isRecord(raw.discovery) ? discoveryOf(raw.discovery) : undefined;
  return discovery === undefined ? undefined : { type: 'answer', discovery };
}
