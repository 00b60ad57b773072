import type { InternalToolVersion, JsonObject, JsonValue } from '@toolhost/contracts';
import { recordedHost, recordedPath, type EgressRecord } from '@toolhost/egress';
import { EgressError, type EgressRequest, type EgressResponse } from '@toolhost/sandbox';
import type { WorkerEgress } from '../egress/worker-egress';
import type { RunState } from './run-state';

/**
 * The `fetch` of one run: its tool's policy, the tree's deadline and budget, the tool's secrets for the secret rule,
 * an audit row (event `egress`) and a log line for every request made or refused. Every request still open when the
 * run ends is aborted (`end()`), whatever the sandbox does with its own signal.
 */
export class RunEgress {
  private readonly ended = new AbortController();

  constructor(
    private readonly egress: WorkerEgress | undefined,
    private readonly tool: InternalToolVersion,
    private readonly plan: RunState,
    private readonly audit: (event: string, data: JsonValue) => void,
  ) {}

  fetch(request: EgressRequest, signal: AbortSignal): Promise<EgressResponse> {
    const budget = this.plan.egressBudget;
    if (!this.egress || !budget) {
      const refused = new EgressError('NETWORK_DENIED', 'this worker makes no network requests for tools');
      this.record(refusedRecord(request, refused));
      return Promise.reject(refused);
    }
    if (this.ended.signal.aborted) {
      return Promise.reject(new EgressError('NETWORK_ABORTED', 'the run has ended'));
    }
    return this.egress.fetcher.fetch(request, {
      policy: this.egress.policyFor(this.tool),
      signal: AbortSignal.any([signal, this.ended.signal]),
      deadline: this.plan.deadlineAt,
      budget,
      secrets: Object.values(this.tool.secrets),
      record: (entry) => this.record(entry),
    });
  }

  /** Aborts every request of this run still open. */
  end(): void {
    this.ended.abort();
  }

  private record(entry: EgressRecord): void {
    // A secret in the path is masked here already: the log line is written now, the audit row masked again on write.
    const masked: EgressRecord = { ...entry, path: this.plan.secrets.text(entry.path) };
    this.audit('egress', auditData(masked));
    this.egress?.write(masked, {
      invocationId: this.plan.invocationId,
      toolId: this.plan.toolId,
      requestId: this.plan.requestId,
    });
  }
}

/** The audit row's data: the record's fields, nothing else (no headers, no bodies). */
function auditData(record: EgressRecord): JsonObject {
  const { method, host, path, status, bytes, ms, outcome, code } = record;
  return { method, host, path, status, bytes, ms, outcome, ...(code === undefined ? {} : { code }) };
}

function refusedRecord(request: EgressRequest, error: EgressError): EgressRecord {
  let url: URL | undefined;
  try {
    url = new URL(request.url);
  } catch {
    url = undefined;
  }
  return {
    method: request.method,
    host: url ? recordedHost(url) : '',
    path: url ? recordedPath(url) : '',
    status: null,
    bytes: 0,
    ms: 0,
    outcome: 'denied',
    code: error.code,
  };
}
