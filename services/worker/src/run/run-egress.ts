import type { InternalToolVersion, JsonObject, JsonValue } from '@toolhost/contracts';
import { recordedHost, recordedPath, type EgressBudget, type EgressRecord } from '@toolhost/egress';
import { EgressError, type EgressRequest, type EgressResponse } from '@toolhost/sandbox';
import type { WorkerEgress } from '../egress/worker-egress';
import type { RunState } from './run-state';

/**
 * The `fetch` of one run: its tool's policy, the tree's deadline and budget, the tool's secrets for the secret rule,
 * an audit row (event `egress`) and a log line for every request made or refused. Every request still open when the
 * run ends is aborted (`end()`), whatever the sandbox does with its own signal.
 */
export class RunEgress {
  // Made with the run's first fetch: most runs make none, and an AbortController with the DOMException its abort
  // makes cost 5% of an executor's CPU per run when each run had one.
  private ended?: AbortController;
  private over = false;
  private budget?: EgressBudget;

  constructor(
    private readonly egress: WorkerEgress | undefined,
    private readonly tool: InternalToolVersion,
    private readonly plan: RunState,
    private readonly audit: (event: string, data: JsonValue) => void,
  ) {}

  fetch(request: EgressRequest, signal: AbortSignal): Promise<EgressResponse> {
    const budget = this.runBudget();
    if (!this.egress || !budget) {
      const refused = new EgressError('NETWORK_DENIED', 'this worker makes no network requests for tools');
      this.record(refusedRecord(request, refused));
      return Promise.reject(refused);
    }
    if (this.over) return Promise.reject(new EgressError('NETWORK_ABORTED', 'the run has ended'));
    this.ended ??= new AbortController();
    return this.egress.fetcher.fetch(request, {
      policy: this.egress.policyFor(this.tool),
      signal: AbortSignal.any([signal, this.ended.signal]),
      deadline: this.plan.deadlineAt,
      budget,
      secrets: Object.values(this.tool.secrets),
      record: (entry) => this.record(entry),
      ...(this.tool.network?.maxResponseBytes === undefined
        ? {}
        : { maxResponseBytes: this.tool.network.maxResponseBytes }),
      ...(this.tool.network?.timeoutMs === undefined ? {} : { timeoutMs: this.tool.network.timeoutMs }),
    });
  }

  /** The tree's budget, or the tool's own limits within it (each run of the tool counts on its own). */
  private runBudget(): EgressBudget | undefined {
    const tree = this.plan.egressBudget;
    const network = this.tool.network;
    if (!tree || (network?.maxRequests === undefined && network?.maxConcurrent === undefined)) return tree;
    this.budget ??= tree.within(network, 'requests in this run of the tool');
    return this.budget;
  }

  /** Aborts every request of this run still open. */
  end(): void {
    this.over = true;
    this.ended?.abort();
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
