/** OutcomesRepository against a real Postgres (a database of its own, migrated). */
import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import type { OutcomeJob } from '@toolhost/queue';
import { createTestDatabase, queryDatabase, type TestDatabase } from '../../../../test/support/test-database';
import { registryDataSourceOptions } from '../database/registry-data-source';
import { OutcomesRepository } from './outcomes.repository';

let database: TestDatabase;
let db: DataSource;
let repository: OutcomesRepository;
let tenantId: string;

async function newTool(): Promise<string> {
  const [row] = await db.query(`INSERT INTO tools (tenant_id, current_version) VALUES ($1, 1) RETURNING id`, [
    tenantId,
  ]);
  return (row as { id: string }).id;
}

let clock = Date.parse('2026-01-01T00:00:00Z');
function outcome(toolId: string, status: 'succeeded' | 'failed', extra: Partial<OutcomeJob> = {}): OutcomeJob {
  clock += 1;
  return {
    v: 1,
    invocationId: randomUUID(),
    tenantId,
    toolId,
    version: 1,
    status,
    ...(status === 'failed' ? { errorCode: 'USER_ERROR' as const, errorMessage: 'boom' } : {}),
    durationMs: 3,
    context: { agentId: 'agent' },
    inputSha256: 'a'.repeat(64),
    audit: [],
    startedAt: new Date(clock).toISOString(),
    finishedAt: new Date(clock).toISOString(),
    ...extra,
  };
}

const counters = async (toolId: string) =>
  (
    await queryDatabase<{ usage_count: string; failure_count: number; status: string; disabled_reason: string | null }>(
      database.url,
      `SELECT usage_count, failure_count, status, disabled_reason FROM tools WHERE id = $1`,
      [toolId],
    )
  )[0];

beforeAll(async () => {
  database = await createTestDatabase();
  db = new DataSource(registryDataSourceOptions(database.url, 12));
  await db.initialize();
  repository = new OutcomesRepository(db);
  const [tenant] = await db.query(`INSERT INTO tenants (name) VALUES ('t') RETURNING id`);
  tenantId = (tenant as { id: string }).id;
});

afterAll(async () => {
  await db?.destroy();
  await database?.drop();
});

describe('OutcomesRepository', () => {
  it('writes the invocation log, counts, and links ctx.audit rows', async () => {
    const toolId = await newTool();
    const audited = outcome(toolId, 'succeeded', {
      audit: [{ event: 'charged', data: { cents: 5 }, at: new Date().toISOString() }],
    });
    await repository.apply([audited, outcome(toolId, 'failed')], 3);
    expect(await counters(toolId)).toMatchObject({ usage_count: '2', failure_count: 1, status: 'active' });
    const log = await queryDatabase(database.url, `SELECT status, agent_id FROM invocations WHERE tool_id = $1`, [
      toolId,
    ]);
    expect(log).toHaveLength(2);
    const audit = await queryDatabase<{ event: string; invocation_id: string }>(
      database.url,
      `SELECT event, invocation_id FROM audit_events WHERE tool_id = $1`,
      [toolId],
    );
    expect(audit).toEqual([{ event: 'charged', invocation_id: audited.invocationId }]);
  });

  it('ignores redelivered outcomes', async () => {
    const toolId = await newTool();
    const once = outcome(toolId, 'failed');
    await repository.apply([once, once], 3);
    await repository.apply([once], 3);
    expect(await counters(toolId)).toMatchObject({ usage_count: '1', failure_count: 1 });
  });

  it('disables at the third consecutive failure, once, and a success resets the count', async () => {
    const toolId = await newTool();
    await repository.apply([outcome(toolId, 'failed'), outcome(toolId, 'failed')], 3);
    expect(await repository.apply([outcome(toolId, 'succeeded')], 3)).toEqual([]);
    expect((await counters(toolId)).failure_count).toBe(0);
    await repository.apply([outcome(toolId, 'failed'), outcome(toolId, 'failed')], 3);
    const disabled = await repository.apply([outcome(toolId, 'failed')], 3);
    expect(disabled).toEqual([expect.objectContaining({ toolId, tenantId, failureCount: 3 })]);
    const row = await counters(toolId);
    expect(row).toMatchObject({ status: 'disabled', failure_count: 3 });
    expect(row.disabled_reason).toContain('3 consecutive failures');
    // Already disabled: later failures count but do not disable it again.
    expect(await repository.apply([outcome(toolId, 'failed')], 3)).toEqual([]);
    const events = await queryDatabase(
      database.url,
      `SELECT event FROM audit_events WHERE tool_id = $1 AND event = 'tool.disabled'`,
      [toolId],
    );
    expect(events).toHaveLength(1);
  });

  it('keeps counts exact when many batches apply at once', async () => {
    const [a, b] = [await newTool(), await newTool()];
    const batches = Array.from({ length: 20 }, (_, i) =>
      Array.from({ length: 25 }, (_, j) => outcome(j % 2 ? a : b, (i + j) % 3 === 0 ? 'failed' : 'succeeded')),
    );
    await Promise.all(batches.map((batch) => repository.apply(batch, 1_000)));
    const total = batches.flat();
    expect((await counters(a)).usage_count).toBe(String(total.filter((o) => o.toolId === a).length));
    expect((await counters(b)).usage_count).toBe(String(total.filter((o) => o.toolId === b).length));
  });

  it('stores NUL and lone surrogates from tool code and callers, in the same batch as normal outcomes', async () => {
    const [toolId, other] = [await newTool(), await newTool()];
    const normal = outcome(other, 'succeeded');
    // throw new Error('\0'), an error message cut inside a surrogate pair, hostile context and ctx.audit data.
    const hostile = outcome(toolId, 'failed', {
      errorCode: 'USER_\0ERROR' as OutcomeJob['errorCode'],
      errorMessage: `a\0b \udc00 ${'m'.repeat(1_982)}😀`,
      context: { agentId: '\u0000', agentName: 'x\ud83d', conversationId: 'c\0' },
      audit: [{ event: 'e\0', data: { s: '\0', 'k\0': ['\ud83d', { deep: 'y\0' }] }, at: new Date().toISOString() }],
    });
    await repository.apply([normal, hostile, outcome(toolId, 'succeeded')], 3);

    expect(await counters(other)).toMatchObject({ usage_count: '1', failure_count: 0 });
    expect(await counters(toolId)).toMatchObject({ usage_count: '2', failure_count: 0 });
    const [row] = await queryDatabase<{
      error_code: string;
      error_message: string;
      agent_id: string;
      agent_name: string;
    }>(database.url, `SELECT error_code, error_message, agent_id, agent_name FROM invocations WHERE id = $1`, [
      hostile.invocationId,
    ]);
    expect(row).toMatchObject({ error_code: 'USER_ERROR', agent_id: '', agent_name: 'x\ufffd' });
    expect(row.error_message.startsWith('ab \ufffd mmm')).toBe(true);
    const [tool] = await queryDatabase<{ last_error: string }>(
      database.url,
      `SELECT last_error FROM tools WHERE id = $1`,
      [toolId],
    );
    // The counter's cut (2000 characters) falls inside the emoji.
    expect(tool.last_error).toHaveLength(2_000);
    expect(tool.last_error.endsWith('m\ufffd')).toBe(true);
    const audit = await queryDatabase<{ event: string; data: unknown }>(
      database.url,
      `SELECT event, data FROM audit_events WHERE invocation_id = $1`,
      [hostile.invocationId],
    );
    expect(audit).toEqual([{ event: 'e', data: { s: '', k: ['\ufffd', { deep: 'y' }] } }]);
  });

  it('drops outcomes of tools that do not exist or belong to another tenant', async () => {
    const toolId = await newTool();
    await repository.apply(
      [outcome(randomUUID(), 'succeeded'), outcome(toolId, 'succeeded', { tenantId: randomUUID() })],
      3,
    );
    expect((await counters(toolId)).usage_count).toBe('0');
  });
});
