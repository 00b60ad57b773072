import type { DataSource, EntityManager } from 'typeorm';
import { toolNameOf } from '@toolhost/contracts';
import type { OutcomeJob } from '@toolhost/queue';
import { counterDeltas, isBlamedFailure, uniqueByInvocation } from './counter-deltas';
import { storable } from './storable';

/** A tool this batch disabled (it was active before and reached the failure limit). */
export interface DisabledTool {
  toolId: string;
  tenantId: string;
  version: number;
  failureCount: number;
  reason: string;
}

/**
 * Applies a batch of outcomes in one transaction: the invocation log rows (ON CONFLICT on the invocation id, so a
 * redelivered outcome is a no-op), then the counters of the tools whose outcomes were new — one UPDATE for the whole
 * batch: usage added to the row's current values, the consecutive failures recounted in finishing order (the rule is on
 * updateCounters), so concurrent, late and reordered batches all stay exact — then the audit rows (`ctx.audit`,
 * automatic disabling). Every string is made storable first (tool code and callers choose most of them, and one NUL
 * would fail the whole batch). Batches travel as one JSON text per statement, read with `json_to_recordset`: unlike
 * `jsonb_to_recordset` it reads the text once, without building a jsonb value first, which cost Postgres ~7 µs more per
 * invocation row (a quarter of its insert). A plain class (the module builds it from the DataSource), so tests drive it
 * against a real Postgres without Nest.
 */
export class OutcomesRepository {
  constructor(private readonly db: DataSource) {}

  /** Whether Postgres answers `SELECT 1` within `timeoutMs` (the database-up metric). */
  async answers(timeoutMs = 2_000): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs);
    });
    const query = this.db.query('SELECT 1').then(
      () => true,
      () => false,
    );
    try {
      return await Promise.race([query, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  apply(batch: readonly OutcomeJob[], disableAfter: number): Promise<DisabledTool[]> {
    const unique = uniqueByInvocation(batch).map((outcome) => storable(outcome));
    const tests = unique.filter((outcome) => outcome.test === true);
    const outcomes = unique.filter((outcome) => outcome.test !== true);
    return this.db.transaction(async (manager) => {
      if (tests.length > 0) await this.insertTests(manager, tests);
      if (outcomes.length === 0) return [];
      const wasActive = await this.lockTools(manager, outcomes);
      const fresh = await this.insertInvocations(manager, outcomes);
      const applied = outcomes.filter((outcome) => fresh.has(outcome.invocationId));
      if (applied.length === 0) return [];
      const disabled = await this.updateCounters(manager, applied, disableAfter, wasActive);
      await this.insertAudit(manager, applied, disabled);
      return disabled;
    });
  }

  /**
   * Locks the batch's tools first, in id order, so concurrent batches queue up instead of deadlocking, and reads
   * their status as it is now: only a tool that was active is reported as newly disabled. NO KEY UPDATE does not
   * conflict with the KEY SHARE locks that the invocation rows' foreign keys take.
   */
  private async lockTools(manager: EntityManager, outcomes: OutcomeJob[]): Promise<Set<string>> {
    const ids = [...new Set(outcomes.map((outcome) => outcome.toolId))].sort();
    const rows: { id: string; status: string }[] = await manager.query(
      `SELECT id, status FROM tools WHERE id = ANY($1::uuid[]) ORDER BY id FOR NO KEY UPDATE`,
      [ids],
    );
    return new Set(rows.filter((row) => row.status === 'active').map((row) => row.id));
  }

  private async insertInvocations(manager: EntityManager, outcomes: OutcomeJob[]): Promise<Set<string>> {
    // Absent values stay undefined, which JSON.stringify leaves out and json_to_recordset reads as NULL: most are
    // absent in most outcomes, and the batch's text is what the registry builds, sends and Postgres parses (each row
    // with its nulls written out cost the registry ~3 µs and Postgres ~2 µs more).
    const rows = outcomes.map((o) => ({
      id: o.invocationId,
      parent_invocation_id: o.parentInvocationId,
      root_invocation_id: o.rootInvocationId,
      tenant_id: o.tenantId,
      tool_id: o.toolId,
      version: o.version,
      status: o.status,
      // The flag means nothing on a success (isBlamedFailure).
      blameless: o.status === 'failed' && !isBlamedFailure(o),
      error_code: o.errorCode,
      error_message: o.errorMessage,
      duration_ms: Math.round(o.durationMs),
      agent_id: o.context.agentId,
      agent_name: o.context.agentName,
      power_user_id: o.context.powerUserId,
      tool_call_id: o.context.toolCallId,
      conversation_id: o.context.conversationId,
      input_sha256: o.inputSha256,
      started_at: o.startedAt,
      finished_at: o.finishedAt,
    }));
    // The join drops outcomes of tools that are gone (or do not belong to the tenant): they count nowhere.
    const inserted: { id: string }[] = await manager.query(
      `INSERT INTO invocations (id, parent_invocation_id, root_invocation_id, tenant_id, tool_id, version, status,
              blameless, error_code, error_message, duration_ms, agent_id, agent_name, power_user_id, tool_call_id,
              conversation_id, input_sha256, created_at, started_at, finished_at)
       SELECT x.id, x.parent_invocation_id, x.root_invocation_id, x.tenant_id, x.tool_id, x.version, x.status,
              x.blameless, x.error_code, x.error_message, x.duration_ms, x.agent_id, x.agent_name, x.power_user_id,
              x.tool_call_id, x.conversation_id, x.input_sha256, x.started_at, x.started_at, x.finished_at
         FROM json_to_recordset($1::json) AS x(id uuid, parent_invocation_id uuid, root_invocation_id uuid,
              tenant_id uuid, tool_id uuid, version integer, status text, blameless boolean, error_code text,
              error_message text, duration_ms integer, agent_id text, agent_name text, power_user_id text,
              tool_call_id text, conversation_id text, input_sha256 text, started_at timestamptz,
              finished_at timestamptz)
         JOIN tools t ON t.id = x.tool_id AND t.tenant_id = x.tenant_id
       ON CONFLICT (id) DO NOTHING
       RETURNING id`,
      [JSON.stringify(rows)],
    );
    return new Set(inserted.map((row) => row.id));
  }

  /**
   * The counting rule. Runs are ordered by when they finished, not by when their outcomes arrive (two registry
   * consumers, a dead consumer's entries taken over, a worker writing an outcome again all reorder them); on a tie a
   * success comes after the failures, which it ends. Blameless failures are usage, never part of a run.
   *
   * - `failure_count` is the number of invocation trees with a blamed failure of the tool that finished after both its
   *   latest success and its `failure_count_reset_at` (the time of its last enable: ToolRepository.setStatus): a tree
   *   is charged at most one failure per tool, however many of its runs of that tool failed (the run's
   *   `root_invocation_id`; a root is its own tree). Its usage counts every run. It is recounted from the
   *   invocation log, which holds every outcome applied so far, under the tool's row lock, so it depends on which
   *   outcomes have arrived and never on their order: a late success resets only what finished before it, a late
   *   failure counts only when no success finished after it, and failures from before an enable never come back.
   * - An active tool is disabled when one of the batch's new blamed failures, after the reset point, belongs to a
   *   run of blamed failures of at least `disableAfter` trees with no success between them: the trailing run, or one
   *   that a success which finished later (and may have arrived first) ended. Only a tool that was active when the
   *   batch locked it counts as newly disabled, and an enable moves the reset point past the run, so it happens once.
   *   What cannot be exact: a disable decided on the outcomes seen so far stays when a success that finished inside
   *   the run arrives after it.
   *
   * The queries use invocations_tool_status_finished_idx: each tool costs a few index probes and a count of its
   * current run, which the disable keeps short.
   */
  private async updateCounters(
    manager: EntityManager,
    applied: OutcomeJob[],
    disableAfter: number,
    wasActive: Set<string>,
  ): Promise<DisabledTool[]> {
    const deltas = counterDeltas(applied);
    const blamed = applied.filter(isBlamedFailure).map((outcome) => outcome.invocationId);
    // The invocation tree a run belongs to: a tree is charged at most one failure per tool, however many of its runs
    // of that tool failed (a recursive tool that overspent the budget fails in every nested run).
    const tree = (alias: string) => `COALESCE(${alias}.root_invocation_id, ${alias}.id)`;
    const latestSuccess = (tool: string, before: string) =>
      `(SELECT max(s.finished_at) FROM invocations s
         WHERE s.tool_id = ${tool} AND s.status = 'succeeded' AND NOT s.blameless ${before})`;
    // Runs are looked for only around the batch's new blamed failures (most batches have none: then `n` is empty and
    // the lateral joins never run), and only for active tools, the only ones a run can disable.
    const runs = `
         SELECT n.tool_id, max(run.failures) AS longest
           FROM invocations n
           JOIN tools t ON t.id = n.tool_id AND t.status = 'active'
          CROSS JOIN LATERAL (
            SELECT COALESCE(GREATEST(t.failure_count_reset_at,
                                     ${latestSuccess('n.tool_id', 'AND s.finished_at < n.finished_at')}),
                            '-infinity') AS after,
                   COALESCE((SELECT min(s.finished_at) FROM invocations s
                              WHERE s.tool_id = n.tool_id AND s.status = 'succeeded' AND NOT s.blameless
                                AND s.finished_at >= n.finished_at), 'infinity') AS until
          ) bounds
          CROSS JOIN LATERAL (
            SELECT count(DISTINCT ${tree('f')})::integer AS failures FROM invocations f
             WHERE f.tool_id = n.tool_id AND f.status = 'failed' AND NOT f.blameless
               AND f.finished_at > bounds.after AND f.finished_at <= bounds.until
          ) run
          WHERE n.id = ANY($2::uuid[]) AND n.finished_at > COALESCE(t.failure_count_reset_at, '-infinity')
          GROUP BY n.tool_id`;
    const reaches = `(t.status = 'active' AND COALESCE(r.longest, 0) >= $3)`;
    // The reason names the last failure that counted: a blameless one (a run ended because another run took its
    // isolate or process down) may be the newer last_error, but it is not why the tool was disabled.
    const lastBlamedError = `(SELECT left(COALESCE(f.error_code, 'FAILED') || ': ' || COALESCE(f.error_message, ''), 2000)
                                FROM invocations f
                               WHERE f.tool_id = t.id AND f.status = 'failed' AND NOT f.blameless
                               ORDER BY f.finished_at DESC, f.id DESC LIMIT 1)`;
    // The error of the failure that finished last, whatever order outcomes arrive in (a late, older failure does not
    // replace a newer error). A tool whose error predates last_error_at (added later) takes the next one.
    const lastError = `CASE WHEN d.last_error_at IS NOT NULL
                             AND (t.last_error_at IS NULL OR d.last_error_at >= t.last_error_at)
                            THEN d.last_error ELSE t.last_error END`;
    const updated: {
      id: string;
      tenant_id: string;
      current_version: number;
      status: string;
      longest: number | null;
      disabled_reason: string | null;
    }[] = await manager.query(
      `WITH d AS (
         SELECT * FROM json_to_recordset($1::json)
           AS d(tool_id uuid, uses integer, last_error text, last_error_at timestamptz, last_used_at timestamptz)
       ),
       runs AS (${runs}),
       updated AS (UPDATE tools t SET
              usage_count = t.usage_count + d.uses,
              failure_count = (
                SELECT count(DISTINCT ${tree('f')})::integer FROM invocations f
                 WHERE f.tool_id = t.id AND f.status = 'failed' AND NOT f.blameless
                   AND f.finished_at > COALESCE(GREATEST(t.failure_count_reset_at, ${latestSuccess('t.id', '')}),
                                                '-infinity')),
              last_error = ${lastError},
              last_error_at = GREATEST(t.last_error_at, d.last_error_at),
              last_used_at = GREATEST(t.last_used_at, d.last_used_at),
              status = CASE WHEN ${reaches} THEN 'disabled' ELSE t.status END,
              disabled_reason = CASE WHEN ${reaches}
                THEN format('disabled after %s consecutive failures; last error: %s', r.longest,
                            ${lastBlamedError})
                ELSE t.disabled_reason END,
              updated_at = CASE WHEN ${reaches} THEN now() ELSE t.updated_at END
         FROM d LEFT JOIN runs r ON r.tool_id = d.tool_id
        WHERE t.id = d.tool_id
       RETURNING t.id, t.tenant_id, t.current_version, t.status, r.longest, t.disabled_reason)
       SELECT * FROM updated`,
      [
        JSON.stringify(
          deltas.map((d) => ({
            tool_id: d.toolId,
            uses: d.uses,
            last_error: d.lastError,
            last_error_at: d.lastErrorAt,
            last_used_at: d.lastUsedAt,
          })),
        ),
        blamed,
        disableAfter,
      ],
    );
    return updated
      .filter((row) => row.status === 'disabled' && wasActive.has(row.id))
      .map((row) => ({
        toolId: row.id,
        tenantId: row.tenant_id,
        version: row.current_version,
        failureCount: row.longest ?? 0,
        reason: row.disabled_reason ?? 'disabled after consecutive failures',
      }));
  }

  /**
   * Dry runs (`test` outcomes): one `tool.tested` row each (once: audit_events_tested_once), with their `ctx.audit`
   * rows; never the invocation log, so they count nowhere (usage, failures, disabling). A tool that is gone, or not
   * the tenant's, gets nothing.
   */
  private async insertTests(manager: EntityManager, tests: OutcomeJob[]): Promise<void> {
    const rows = tests.map((o) => ({
      tenant_id: o.tenantId,
      tool_id: o.toolId,
      invocation_id: o.invocationId,
      created_at: o.finishedAt,
      data: {
        version: o.version,
        status: o.status,
        ...(o.errorCode === undefined ? {} : { errorCode: o.errorCode }),
        durationMs: Math.round(o.durationMs),
        ...(o.parentInvocationId === undefined ? {} : { parentInvocationId: o.parentInvocationId }),
      },
    }));
    const fresh: { invocation_id: string }[] = await manager.query(
      `INSERT INTO audit_events (tenant_id, tool_id, event, data, invocation_id, actor, created_at)
       SELECT x.tenant_id, x.tool_id, 'tool.tested', x.data, x.invocation_id, 'test', x.created_at
         FROM json_to_recordset($1::json) AS x(tenant_id uuid, tool_id uuid, invocation_id uuid, created_at timestamptz,
              data jsonb)
         JOIN tools t ON t.id = x.tool_id AND t.tenant_id = x.tenant_id
       ON CONFLICT (invocation_id) WHERE event = 'tool.tested' DO NOTHING
       RETURNING invocation_id`,
      [JSON.stringify(rows)],
    );
    const recorded = new Set(fresh.map((row) => row.invocation_id));
    await this.insertAudit(
      manager,
      tests.filter((test) => recorded.has(test.invocationId)),
      [],
    );
  }

  private async insertAudit(manager: EntityManager, applied: OutcomeJob[], disabled: DisabledTool[]): Promise<void> {
    const rows = [
      ...applied.flatMap((o) =>
        o.audit.map((entry) => ({
          tenant_id: o.tenantId,
          tool_id: o.toolId,
          event: entry.event,
          data: entry.data,
          invocation_id: o.invocationId,
          actor: toolNameOf(o.toolId),
          created_at: entry.at,
        })),
      ),
      ...disabled.map((tool) => ({
        tenant_id: tool.tenantId,
        tool_id: tool.toolId,
        event: 'tool.disabled',
        data: { automatic: true, reason: tool.reason, failureCount: tool.failureCount },
        invocation_id: null,
        actor: 'system',
        created_at: new Date().toISOString(),
      })),
    ];
    if (rows.length === 0) return;
    await manager.query(
      `INSERT INTO audit_events (tenant_id, tool_id, event, data, invocation_id, actor, created_at)
       SELECT x.tenant_id, x.tool_id, x.event, x.data, x.invocation_id, x.actor, x.created_at
         FROM json_to_recordset($1::json) AS x(tenant_id uuid, tool_id uuid, event text, data jsonb,
              invocation_id uuid, actor text, created_at timestamptz)`,
      [JSON.stringify(rows)],
    );
  }
}
