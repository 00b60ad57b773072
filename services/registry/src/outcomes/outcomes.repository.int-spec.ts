/** OutcomesRepository against a real Postgres (a database of its own, migrated). */
import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import type { OutcomeJob } from '@toolhost/queue';
import { createTenantWithKey, toolBody } from '../../../../test/support/registry-fixtures';
import { startRegistry } from '../../../../test/support/registry-server';
import { createTestDatabase, queryDatabase, type TestDatabase } from '../../../../test/support/test-database';
import { InitialSchema1764400000000 } from '../database/migrations/1764400000000-initial-schema.migration';
import { migrateDatabase, registryDataSourceOptions } from '../database/registry-data-source';
import { OutcomesRepository } from './outcomes.repository';
import { defined } from '../../../../test/support/defined';

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

const T0 = Date.parse('2026-02-01T00:00:00Z');
/** A run of `toolId` that finished `ms` after T0, so tests choose the finishing order and the arrival order apart. */
function finished(
  toolId: string,
  status: 'succeeded' | 'failed',
  ms: number,
  extra: Partial<OutcomeJob> = {},
): OutcomeJob {
  const at = new Date(T0 + ms).toISOString();
  const message = status === 'failed' ? { errorMessage: `run at ${ms}` } : {};
  return outcome(toolId, status, { startedAt: at, finishedAt: at, ...message, ...extra });
}

function permutations<T>(items: readonly T[]): T[][] {
  if (items.length <= 1) return [[...items]];
  return items.flatMap((item, i) =>
    permutations([...items.slice(0, i), ...items.slice(i + 1)]).map((rest) => [item, ...rest]),
  );
}

/** Applies the batches in turn on `repository`; returns how many times a batch reported the tool disabled. */
async function applyAll(batches: OutcomeJob[][], on: OutcomesRepository = repository): Promise<number> {
  let disabled = 0;
  for (const batch of batches) disabled += (await on.apply(batch, 3)).length;
  return disabled;
}

const counters = async (toolId: string) =>
  defined(
    (
      await queryDatabase<{
        usage_count: string;
        failure_count: number;
        status: string;
        disabled_reason: string | null;
      }>(database.url, `SELECT usage_count, failure_count, status, disabled_reason FROM tools WHERE id = $1`, [toolId])
    )[0],
    'the tool row',
  );

beforeAll(async () => {
  database = await createTestDatabase();
  db = new DataSource(registryDataSourceOptions(database.url, 12));
  await db.initialize();
  repository = new OutcomesRepository(db);
  const [tenant] = await db.query(`INSERT INTO tenants (name) VALUES ('t') RETURNING id`);
  tenantId = (tenant as { id: string }).id;
});

afterAll(async () => {
  // Set by a before hook that may have failed before assigning them: close only what started.
  /* eslint-disable @typescript-eslint/no-unnecessary-condition -- see above */
  await db?.destroy();
  await database?.drop();
  /* eslint-enable @typescript-eslint/no-unnecessary-condition */
});

describe('OutcomesRepository', () => {
  it('says whether Postgres answers (the database-up metric)', async () => {
    expect(await repository.answers()).toBe(true);
    // A data source that cannot query (it never connected): no answer is false, not an error.
    const nowhere = new DataSource(registryDataSourceOptions('postgres://postgres@127.0.0.1:1/none', 1));
    expect(await new OutcomesRepository(nowhere).answers(500)).toBe(false);
  });

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

  it('records dry runs once as tool.tested with their ctx.audit rows, and counts none of them', async () => {
    const toolId = await newTool();
    await repository.apply([outcome(toolId, 'failed'), outcome(toolId, 'failed')], 3);
    const test = (status: 'succeeded' | 'failed', extra: Partial<OutcomeJob> = {}): OutcomeJob =>
      outcome(toolId, status, { test: true, ...extra });
    const audited = test('succeeded', {
      audit: [{ event: 'charged', data: { cents: 1 }, at: new Date().toISOString() }],
    });
    const failures = [test('failed'), test('failed'), test('failed')];
    // A third failing run would disable the tool; three failing dry runs, with a redelivery, change nothing.
    expect(await repository.apply([audited, ...failures, failures[0] as OutcomeJob], 3)).toEqual([]);
    expect(await repository.apply([audited], 3)).toEqual([]);
    expect(await counters(toolId)).toMatchObject({ usage_count: '2', failure_count: 2, status: 'active' });
    const log = await queryDatabase(database.url, `SELECT id FROM invocations WHERE tool_id = $1`, [toolId]);
    expect(log).toHaveLength(2);
    const audit = await queryDatabase<{ event: string; invocation_id: string; actor: string; data: unknown }>(
      database.url,
      `SELECT event, invocation_id, actor, data FROM audit_events WHERE tool_id = $1 ORDER BY seq`,
      [toolId],
    );
    expect(audit.filter((row) => row.event === 'tool.tested')).toHaveLength(4);
    expect(audit.find((row) => row.invocation_id === failures[1]?.invocationId)).toMatchObject({
      event: 'tool.tested',
      actor: 'test',
      data: { version: 1, status: 'failed', errorCode: 'USER_ERROR', durationMs: 3 },
    });
    expect(audit.filter((row) => row.event === 'charged')).toEqual([
      expect.objectContaining({ invocation_id: audited.invocationId }),
    ]);
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
      errorCode: 'USER_\0ERROR' as NonNullable<OutcomeJob['errorCode']>,
      errorMessage: `a\0b \udc00 ${'m'.repeat(1_982)}😀`,
      context: { agentId: '\u0000', agentName: 'x\ud83d', conversationId: 'c\0' },
      audit: [{ event: 'e\0', data: { s: '\0', 'k\0': ['\ud83d', { deep: 'y\0' }] }, at: new Date().toISOString() }],
    });
    await repository.apply([normal, hostile, outcome(toolId, 'succeeded')], 3);

    expect(await counters(other)).toMatchObject({ usage_count: '1', failure_count: 0 });
    expect(await counters(toolId)).toMatchObject({ usage_count: '2', failure_count: 0 });
    const row = defined(
      (
        await queryDatabase<{
          error_code: string;
          error_message: string;
          agent_id: string;
          agent_name: string;
        }>(database.url, `SELECT error_code, error_message, agent_id, agent_name FROM invocations WHERE id = $1`, [
          hostile.invocationId,
        ])
      )[0],
      'row',
    );
    expect(row).toMatchObject({ error_code: 'USER_ERROR', agent_id: '', agent_name: 'x\ufffd' });
    expect(row.error_message.startsWith('ab \ufffd mmm')).toBe(true);
    const tool = defined(
      (
        await queryDatabase<{ last_error: string }>(database.url, `SELECT last_error FROM tools WHERE id = $1`, [
          toolId,
        ])
      )[0],
      'tool',
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

  it('writes every column of the invocation log, and NULL for what an outcome leaves out', async () => {
    const toolId = await newTool();
    const root = outcome(toolId, 'succeeded', { context: {} });
    const nested = outcome(toolId, 'failed', {
      parentInvocationId: root.invocationId,
      rootInvocationId: root.invocationId,
      errorCode: 'USER_ERROR',
      errorMessage: '',
      durationMs: 2.6,
      context: {
        agentId: 'agent-1',
        agentName: 'Agent One',
        powerUserId: null,
        toolCallId: 'call-1',
        conversationId: 'conv-1',
      },
    });
    const ofUser = outcome(toolId, 'succeeded', { context: { powerUserId: 'user-1' } });
    await repository.apply([root, nested, ofUser], 3);
    const rows = await queryDatabase<Record<string, unknown>>(
      database.url,
      `SELECT id, parent_invocation_id, root_invocation_id, tenant_id, tool_id, version, status, blameless, error_code,
              error_message, duration_ms, agent_id, agent_name, power_user_id, tool_call_id, conversation_id,
              input_sha256, created_at = started_at AS created_at_started, started_at, finished_at
         FROM invocations WHERE tool_id = $1 ORDER BY finished_at`,
      [toolId],
    );
    const absent = {
      parent_invocation_id: null,
      root_invocation_id: null,
      error_code: null,
      error_message: null,
      agent_id: null,
      agent_name: null,
      power_user_id: null,
      tool_call_id: null,
      conversation_id: null,
    };
    const common = { tenant_id: tenantId, tool_id: toolId, version: 1, input_sha256: 'a'.repeat(64) };
    expect(rows).toEqual([
      {
        ...common,
        ...absent,
        id: root.invocationId,
        status: 'succeeded',
        blameless: false,
        duration_ms: 3,
        created_at_started: true,
        started_at: new Date(root.startedAt),
        finished_at: new Date(root.finishedAt),
      },
      {
        ...common,
        id: nested.invocationId,
        parent_invocation_id: root.invocationId,
        root_invocation_id: root.invocationId,
        status: 'failed',
        blameless: false,
        error_code: 'USER_ERROR',
        error_message: '',
        duration_ms: 3,
        agent_id: 'agent-1',
        agent_name: 'Agent One',
        power_user_id: null,
        tool_call_id: 'call-1',
        conversation_id: 'conv-1',
        created_at_started: true,
        started_at: new Date(nested.startedAt),
        finished_at: new Date(nested.finishedAt),
      },
      {
        ...common,
        ...absent,
        id: ofUser.invocationId,
        status: 'succeeded',
        blameless: false,
        duration_ms: 3,
        power_user_id: 'user-1',
        created_at_started: true,
        started_at: new Date(ofUser.startedAt),
        finished_at: new Date(ofUser.finishedAt),
      },
    ]);
  });

  it('drops outcomes of tools that do not exist or belong to another tenant', async () => {
    const toolId = await newTool();
    await repository.apply(
      [outcome(randomUUID(), 'succeeded'), outcome(toolId, 'succeeded', { tenantId: randomUUID() })],
      3,
    );
    expect((await counters(toolId)).usage_count).toBe('0');
  });

  describe('consecutive failures by finishing order, whatever order the batches arrive in', () => {
    /** F1 F2 S3 F4 F5 in finishing order: 2 consecutive failures at the end, never 3. */
    function reviewerRuns(toolId: string) {
      return {
        f1: finished(toolId, 'failed', 1_000),
        f2: finished(toolId, 'failed', 2_000),
        s3: finished(toolId, 'succeeded', 3_000),
        f4: finished(toolId, 'failed', 4_000),
        f5: finished(toolId, 'failed', 5_000),
      };
    }

    it('counts F1 F2 S3 F4 F5 as 2 without disabling, in every order and split where S3 is known in time', async () => {
      const plans: string[][][] = [
        [
          ['s3', 'f4', 'f5'],
          ['f1', 'f2'],
        ],
        [['f4', 'f5'], ['s3'], ['f1', 'f2']],
        [
          ['f4', 'f5'],
          ['f1', 'f2', 's3'],
        ],
        [
          ['f5', 'f1'],
          ['s3', 'f2', 'f4'],
        ],
        [['f1', 'f2', 's3', 'f4', 'f5']],
        // A redelivered batch (a consumer that died before XACK, a worker that wrote again) counts once.
        [
          ['s3', 'f4', 'f5'],
          ['f1', 'f2'],
          ['s3', 'f4', 'f5'],
          ['f2', 'f5', 'f1'],
        ],
        // Outcomes one at a time, in every order in which no 3 failures arrive before S3 (then the registry
        // cannot know yet that they were not consecutive).
        ...permutations(['f1', 'f2', 's3', 'f4', 'f5'])
          .filter((order) => order.indexOf('s3') <= 2)
          .map((order) => order.map((name) => [name])),
      ];
      // Each plan on a tool of its own, side by side.
      await Promise.all(
        plans.map(async (plan) => {
          const toolId = await newTool();
          const runs: Record<string, OutcomeJob> = reviewerRuns(toolId);
          const disabled = await applyAll(plan.map((batch) => batch.map((name) => defined(runs[name], name))));
          const row = await counters(toolId);
          expect({ plan, disabled, ...row }).toMatchObject({
            plan,
            disabled: 0,
            usage_count: '5',
            failure_count: 2,
            status: 'active',
          });
        }),
      );
    });

    it('keeps as last error the one that finished last, when an older failure arrives after it', async () => {
      const toolId = await newTool();
      const older = finished(toolId, 'failed', 1_000, { errorMessage: 'the older error' });
      const newer = finished(toolId, 'failed', 2_000, { errorMessage: 'the newer error' });
      await applyAll([[newer], [older]]);
      const row = defined(
        (
          await queryDatabase<{ last_error: string }>(database.url, `SELECT last_error FROM tools WHERE id = $1`, [
            toolId,
          ])
        )[0],
        'row',
      );
      expect(row.last_error).toBe('USER_ERROR: the newer error');
    });

    it('lets a success that finished in the same millisecond as a failure end it, in any order', async () => {
      const orders: ('success' | 'failure')[][][] = [
        [['success'], ['failure']],
        [['failure'], ['success']],
        [['success', 'failure']],
        [['failure', 'success']],
      ];
      for (const plan of orders) {
        const toolId = await newTool();
        const runs = { failure: finished(toolId, 'failed', 1_000), success: finished(toolId, 'succeeded', 1_000) };
        await applyAll(plan.map((batch) => batch.map((name) => runs[name])));
        expect({ plan, ...(await counters(toolId)) }).toMatchObject({ plan, usage_count: '2', failure_count: 0 });
      }
    });

    it('disables at three consecutive failures exactly once, whatever the order, with successes around them', async () => {
      // S0 F1 F2 F3 (count 3 at the end) and F1 F2 F3 S4 (count 0 at the end): disabled either way.
      for (const [extra, expectedCount] of [
        ['s0', 3],
        ['s4', 0],
      ] as const) {
        const orders = permutations(['f1', 'f2', 'f3', extra]);
        const plans = [
          ...orders.map((order) => order.map((name) => [name])),
          [
            [extra, 'f3'],
            ['f1', 'f2'],
          ],
          [['f2', 'f3'], [extra], ['f1'], ['f2', 'f1', extra]],
        ];
        await Promise.all(
          plans.map(async (plan) => {
            const toolId = await newTool();
            const runs: Record<string, OutcomeJob> = {
              s0: finished(toolId, 'succeeded', 0),
              f1: finished(toolId, 'failed', 1_000),
              f2: finished(toolId, 'failed', 2_000),
              f3: finished(toolId, 'failed', 3_000),
              s4: finished(toolId, 'succeeded', 4_000),
            };
            const disabled = await applyAll(plan.map((batch) => batch.map((name) => defined(runs[name], name))));
            const row = await counters(toolId);
            const events = await queryDatabase(
              database.url,
              `SELECT data FROM audit_events WHERE tool_id = $1 AND event = 'tool.disabled'`,
              [toolId],
            );
            expect({ plan, disabled, events: events.length, ...row }).toMatchObject({
              plan,
              disabled: 1,
              events: 1,
              usage_count: '4',
              failure_count: expectedCount,
              status: 'disabled',
            });
            expect(row.disabled_reason).toContain('after 3 consecutive failures');
          }),
        );
      }
    });
  });

  describe('one failure per tool and invocation tree (issue 16)', () => {
    /** A root run of `toolId` finishing at `ms` and `nested` runs of it below, all failed, finishing before it. */
    const failedTree = (toolId: string, ms: number, nested: number): OutcomeJob[] => {
      const root = finished(toolId, 'failed', ms, { errorCode: 'BUDGET_EXCEEDED' });
      let parent = root.invocationId;
      const below = Array.from({ length: nested }, (_, depth) => {
        const run = finished(toolId, 'failed', ms - nested + depth, {
          errorCode: 'BUDGET_EXCEEDED',
          parentInvocationId: parent,
          rootInvocationId: root.invocationId,
        });
        parent = run.invocationId;
        return run;
      });
      return [root, ...below];
    };

    it('charges a recursive tool that overspent the budget one failure and 51 uses, under concurrency and redelivery', async () => {
      const toolId = await newTool();
      const tree = failedTree(toolId, 10_000, 50);
      // Shuffled into batches applied at once, then the whole tree delivered again.
      const shuffled = [...tree].sort((a, b) => a.invocationId.localeCompare(b.invocationId));
      const batches = Array.from({ length: 6 }, (_, i) => shuffled.filter((_o, j) => j % 6 === i));
      const disabled = await Promise.all(batches.map((batch) => repository.apply(batch, 3)));
      expect(disabled.flat()).toEqual([]);
      expect(await applyAll([tree, tree.slice(10, 20)])).toBe(0);
      expect(await counters(toolId)).toMatchObject({ usage_count: '51', failure_count: 1, status: 'active' });
    });

    it('counts consecutive failed trees, and disables at the third tree once', async () => {
      const toolId = await newTool();
      expect(await applyAll([failedTree(toolId, 20_000, 10), failedTree(toolId, 30_000, 10)])).toBe(0);
      expect(await counters(toolId)).toMatchObject({ failure_count: 2, status: 'active' });
      const disabled = await repository.apply(failedTree(toolId, 40_000, 10), 3);
      expect(disabled).toEqual([expect.objectContaining({ toolId, failureCount: 3 })]);
      const row = await counters(toolId);
      expect(row).toMatchObject({ usage_count: '33', failure_count: 3, status: 'disabled' });
      expect(row.disabled_reason).toContain('3 consecutive failures');
    });

    it('still counts separate invocations of a tool as separate failures, and a success in a tree resets', async () => {
      const toolId = await newTool();
      await applyAll([[finished(toolId, 'failed', 50_000), finished(toolId, 'failed', 50_001)]]);
      expect((await counters(toolId)).failure_count).toBe(2);
      const tree = failedTree(toolId, 60_000, 3);
      const success = finished(toolId, 'succeeded', 59_999, { rootInvocationId: defined(tree[0]).invocationId });
      await applyAll([[...tree, success]]);
      // Only the tree's root finished after its nested success: the tree is charged once, after the reset.
      expect((await counters(toolId)).failure_count).toBe(1);
    });
  });

  describe('blameless failures', () => {
    it('count as usage and last error, but neither add to nor reset the consecutive count, nor disable', async () => {
      const toolId = await newTool();
      const blameless = (ms: number) =>
        finished(toolId, 'failed', ms, { errorCode: 'SANDBOX_CRASH', errorMessage: `crash at ${ms}`, blameless: true });
      await applyAll([[finished(toolId, 'failed', 1_000), finished(toolId, 'failed', 2_000)]]);
      expect(await applyAll([[blameless(3_000), blameless(4_000)], [blameless(5_000)]])).toBe(0);
      const row = defined(
        (
          await queryDatabase<{
            usage_count: string;
            failure_count: number;
            status: string;
            last_error: string;
            last_used_at: Date;
          }>(
            database.url,
            `SELECT usage_count, failure_count, status, last_error, last_used_at FROM tools WHERE id = $1`,
            [toolId],
          )
        )[0],
        'row',
      );
      expect(row).toMatchObject({
        usage_count: '5',
        failure_count: 2,
        status: 'active',
        last_error: 'SANDBOX_CRASH: crash at 5000',
      });
      expect(row.last_used_at.toISOString()).toBe(new Date(T0 + 5_000).toISOString());
      const log = await queryDatabase<{ blameless: boolean }>(
        database.url,
        `SELECT blameless FROM invocations WHERE tool_id = $1 ORDER BY finished_at`,
        [toolId],
      );
      expect(log.map((r) => r.blameless)).toEqual([false, false, true, true, true]);
      // They did not reset the count either: the next blamed failure is the third consecutive one.
      expect(await applyAll([[finished(toolId, 'failed', 6_000)]])).toBe(1);
      expect(await counters(toolId)).toMatchObject({ failure_count: 3, status: 'disabled' });
    });

    it('are not what the disabled reason names: it names the last failure that counted', async () => {
      const toolId = await newTool();
      const crash = finished(toolId, 'failed', 4_000, {
        errorCode: 'SANDBOX_CRASH',
        errorMessage: 'the tenant isolate was disposed while this run was in it: another run hit TIMEOUT',
        blameless: true,
      });
      const blamed = [1_000, 2_000, 3_000].map((ms) => finished(toolId, 'failed', ms, { errorCode: 'MEMORY_LIMIT' }));
      expect(await applyAll([[...blamed, crash]])).toBe(1);
      const [row] = await queryDatabase<{ last_error: string; disabled_reason: string }>(
        database.url,
        `SELECT last_error, disabled_reason FROM tools WHERE id = $1`,
        [toolId],
      );
      expect(row).toEqual({
        last_error: `SANDBOX_CRASH: ${crash.errorMessage ?? ''}`,
        disabled_reason: 'disabled after 3 consecutive failures; last error: MEMORY_LIMIT: run at 3000',
      });
    });

    it('never disables a tool, however many there are', async () => {
      const toolId = await newTool();
      const crashes = [1, 2, 3, 4].map((i) =>
        finished(toolId, 'failed', i * 1_000, { errorCode: 'SANDBOX_CRASH', blameless: true }),
      );
      expect(await applyAll([crashes.slice(0, 2), crashes.slice(2)])).toBe(0);
      expect(await counters(toolId)).toMatchObject({ usage_count: '4', failure_count: 0, status: 'active' });
    });
  });

  it('keeps the count a tool had before the migration that introduced the reset point', async () => {
    const legacy = await createTestDatabase({ migrate: false });
    const old = new DataSource({
      ...registryDataSourceOptions(legacy.url, 2),
      migrations: [InitialSchema1764400000000],
    });
    try {
      await old.initialize();
      await old.runMigrations();
      const [tenant] = await old.query(`INSERT INTO tenants (name) VALUES ('t') RETURNING id`);
      const tenantOf = (tenant as { id: string }).id;
      // A: F S F F, counted 2. B: F F F, disabled and enabled again, so counted 0.
      const seed = async (failureCount: number, log: ('failed' | 'succeeded')[]): Promise<string> => {
        const [tool] = await old.query(
          `INSERT INTO tools (tenant_id, current_version, failure_count) VALUES ($1, 1, $2) RETURNING id`,
          [tenantOf, failureCount],
        );
        const toolId = (tool as { id: string }).id;
        for (const [i, status] of log.entries()) {
          await old.query(
            `INSERT INTO invocations (id, tenant_id, tool_id, version, status, finished_at) VALUES ($1, $2, $3, 1, $4, $5)`,
            [randomUUID(), tenantOf, toolId, status, new Date(T0 + i * 1_000).toISOString()],
          );
        }
        return toolId;
      };
      const a = await seed(2, ['failed', 'succeeded', 'failed', 'failed']);
      const b = await seed(0, ['failed', 'failed', 'failed']);
      await old.destroy();

      await migrateDatabase(legacy.url);
      const migrated = new DataSource(registryDataSourceOptions(legacy.url, 2));
      await migrated.initialize();
      try {
        const on = new OutcomesRepository(migrated);
        const next = (toolId: string) => finished(toolId, 'failed', 10_000, { tenantId: tenantOf });
        expect(await applyAll([[next(a)], [next(b)]], on)).toBe(1);
        const rows = await queryDatabase<{ id: string; failure_count: number; status: string }>(
          legacy.url,
          `SELECT id, failure_count, status FROM tools WHERE id = ANY($1::uuid[])`,
          [[a, b]],
        );
        expect(Object.fromEntries(rows.map((r) => [r.id, [r.failure_count, r.status]]))).toEqual({
          [a]: [3, 'disabled'],
          [b]: [1, 'active'],
        });
      } finally {
        await migrated.destroy();
      }
    } finally {
      if (old.isInitialized) await old.destroy();
      await legacy.drop();
    }
  });
});

/** Enable through the real registry (its own process and database), then outcomes applied here to the same rows. */
describe('OutcomesRepository after an enable', () => {
  it('does not count failures that finished before the enable, however late their outcomes arrive', async () => {
    const registry = await startRegistry();
    const registryDb = new DataSource(registryDataSourceOptions(registry.database.url, 2));
    try {
      await registryDb.initialize();
      const on = new OutcomesRepository(registryDb);
      const tenant = await createTenantWithKey(registry, 'Enabler');
      const create = async (): Promise<string> =>
        ((await registry.http.post('/v1/tools', tenant.key, toolBody())).body as { id: string }).id;
      const run = (toolId: string, ms: number, status: 'failed' | 'succeeded' = 'failed'): OutcomeJob =>
        finished(toolId, status, ms, { tenantId: tenant.tenantId });
      const record = async (toolId: string) =>
        (await registry.http.get(`/v1/tools/${toolId}`, tenant.key)).body as { failureCount: number; status: string };

      // Disabled by F1 F2 F3 and enabled; F0 and F2.5 (before the enable) arrive late.
      const disabled = await create();
      expect(await applyAll([[run(disabled, 1_000), run(disabled, 2_000), run(disabled, 3_000)]], on)).toBe(1);
      expect(await record(disabled)).toMatchObject({ status: 'disabled', failureCount: 3 });
      expect((await registry.http.post(`/v1/tools/${disabled}/enable`, tenant.key)).status).toBe(200);
      expect(await applyAll([[run(disabled, 0)], [run(disabled, 2_500)]], on)).toBe(0);
      expect(await record(disabled)).toMatchObject({ status: 'active', failureCount: 0 });
      // A failure after the enable counts, from 0.
      expect(await applyAll([[run(disabled, Date.now() + 60_000 - T0)]], on)).toBe(0);
      expect(await record(disabled)).toMatchObject({ status: 'active', failureCount: 1 });

      // Enabled while active with 2 counted: the reset holds against a late third failure from before it.
      const active = await create();
      await applyAll([[run(active, 1_000), run(active, 2_000)]], on);
      expect((await registry.http.post(`/v1/tools/${active}/enable`, tenant.key)).status).toBe(200);
      expect(await applyAll([[run(active, 3_000)]], on)).toBe(0);
      expect(await record(active)).toMatchObject({ status: 'active', failureCount: 0 });
    } finally {
      if (registryDb.isInitialized) await registryDb.destroy();
      await registry.stop();
    }
  });
});
