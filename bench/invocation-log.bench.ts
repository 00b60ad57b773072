/**
 * `npm run bench:log`: what one outcome costs Postgres when the invocation log is at production size, by the kind of
 * invocation id. Two databases of the registry's schema (migrated), each holding BENCH_LOG_ROWS (3,000,000) past
 * invocations of one tool, keyed by random (version 4) ids in one and time-ordered (version 7) ids in the other;
 * then interleaved rounds (BENCH_LOG_ROUNDS 6, order alternating) in which the registry's own `OutcomesRepository`
 * applies BENCH_LOG_BATCHES (30) batches of 400 new outcomes to each, with new ids of its kind. Per outcome: Postgres's
 * CPU (every process of the server, `postgresCpu`), the WAL it wrote and the time. Ratios are medians of per-round
 * ratios; rounds include the checkpoints that fall in them, as a running registry's do. Results also go to
 * `bench/results/log-<time>.json`.
 */
import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { timeOrderedUuid } from '@toolhost/contracts';
import type { OutcomeJob } from '@toolhost/queue';
import { OutcomesRepository } from '../services/registry/src/outcomes/outcomes.repository';
import { registryDataSourceOptions } from '../services/registry/src/database/registry-data-source';
import { createTestDatabase, type TestDatabase } from '../test/support/test-database';
import { median } from './http-bench';
import { postgresCpu, secondsOf } from './process-cpu';
import { ResultsFile } from './results-file';

const ROWS = Number(process.env.BENCH_LOG_ROWS ?? 3_000_000);
const ROUNDS = Number(process.env.BENCH_LOG_ROUNDS ?? 6);
const BATCHES = Number(process.env.BENCH_LOG_BATCHES ?? 30);
/** About what the registry applies per transaction at 64 clients on two cores (docs/benchmarks.md). */
const BATCH = 400;

type IdKind = 'random (v4)' | 'time-ordered (v7)';
const KINDS: readonly IdKind[] = ['random (v4)', 'time-ordered (v7)'];
const newId = (kind: IdKind): string => (kind === 'random (v4)' ? randomUUID() : timeOrderedUuid());

/** A version-7 UUID in SQL, from a time: for the past rows, written by Postgres itself. */
const UUID7_SQL = `CREATE FUNCTION pg_temp.uuid7(at timestamptz) RETURNS uuid LANGUAGE sql VOLATILE AS $$
  SELECT encode(set_bit(set_bit(overlay(uuid_send(gen_random_uuid())
           PLACING substring(int8send((extract(epoch FROM at) * 1000)::bigint) FROM 3) FROM 1 FOR 6), 52, 1), 53, 1),
         'hex')::uuid $$`;

interface Log {
  kind: IdKind;
  database: TestDatabase;
  dataSource: DataSource;
  repository: OutcomesRepository;
  tenantId: string;
  toolId: string;
}

interface Round {
  cpuUsPerOutcome: number;
  walBytesPerOutcome: number;
  usPerOutcome: number;
}

/** A database of the registry's schema whose invocation log holds ROWS past runs keyed by ids of `kind`. */
async function prepare(kind: IdKind): Promise<Log> {
  const database = await createTestDatabase();
  const dataSource = new DataSource(registryDataSourceOptions(database.url, 2));
  await dataSource.initialize();
  const [tenant] = await dataSource.query<{ id: string }[]>(`INSERT INTO tenants (name) VALUES ('bench') RETURNING id`);
  const tenantId = tenant?.id ?? '';
  const [tool] = await dataSource.query<{ id: string }[]>(
    `INSERT INTO tools (tenant_id, current_version) VALUES ($1, 1) RETURNING id`,
    [tenantId],
  );
  const toolId = tool?.id ?? '';
  // One session: the SQL function lives in its temporary schema.
  const runner = dataSource.createQueryRunner();
  try {
    await runner.connect();
    await runner.query(UUID7_SQL);
    const id = kind === 'random (v4)' ? 'gen_random_uuid()' : 'pg_temp.uuid7(at)';
    await runner.query(
      `INSERT INTO invocations (id, tenant_id, tool_id, version, status, duration_ms, input_sha256, created_at,
              started_at, finished_at)
       SELECT ${id}, $1, $2, 1, 'succeeded', 3, repeat('a', 64), at, at, at
         FROM (SELECT now() - interval '30 days' + g * interval '800 ms' AS at
                 FROM generate_series(1, $3::integer) AS g) AS past`,
      [tenantId, toolId, ROWS],
    );
  } finally {
    await runner.release();
  }
  await dataSource.query('VACUUM ANALYZE invocations');
  return { kind, database, dataSource, repository: new OutcomesRepository(dataSource), tenantId, toolId };
}

function outcomes(log: Log): OutcomeJob[] {
  const at = new Date().toISOString();
  return Array.from({ length: BATCH }, () => ({
    v: 1 as const,
    invocationId: newId(log.kind),
    tenantId: log.tenantId,
    toolId: log.toolId,
    version: 1,
    status: 'succeeded' as const,
    durationMs: 3,
    context: { agentId: 'bench' },
    inputSha256: 'a'.repeat(64),
    audit: [],
    startedAt: at,
    finishedAt: at,
  }));
}

async function walLsn(log: Log): Promise<string> {
  const [row] = await log.dataSource.query<{ lsn: string }[]>('SELECT pg_current_wal_lsn() AS lsn');
  return row?.lsn ?? '0/0';
}

async function round(log: Log): Promise<Round> {
  const walBefore = await walLsn(log);
  const cpuBefore = secondsOf(postgresCpu());
  const started = process.hrtime.bigint();
  for (let batch = 0; batch < BATCHES; batch += 1) await log.repository.apply(outcomes(log), 3);
  const elapsedUs = Number(process.hrtime.bigint() - started) / 1e3;
  const cpu = secondsOf(postgresCpu()) - cpuBefore;
  const [wal] = await log.dataSource.query<{ bytes: string }[]>(
    'SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1) AS bytes',
    [walBefore],
  );
  const count = BATCH * BATCHES;
  return {
    cpuUsPerOutcome: (cpu * 1e6) / count,
    walBytesPerOutcome: Number(wal?.bytes ?? 0) / count,
    usPerOutcome: elapsedUs / count,
  };
}

/** The rounds by id kind, under keys a JSON reader can use. */
const byKind = (rounds: Record<IdKind, Round[]>): Record<'v4' | 'v7', Round[]> => ({
  v4: rounds['random (v4)'],
  v7: rounds['time-ordered (v7)'],
});

async function main(): Promise<void> {
  process.stderr.write(
    `invocation log bench: ${ROWS} past rows per database, ${ROUNDS} rounds of ${BATCHES}×${BATCH}\n`,
  );
  const results = new ResultsFile('log');
  const logs: Log[] = [];
  try {
    for (const kind of KINDS) logs.push(await prepare(kind));
    const keySizes = await Promise.all(
      logs.map(async (log) => {
        const [row] = await log.dataSource.query<{ size: string }[]>(
          `SELECT pg_size_pretty(pg_relation_size('invocations_pkey')) AS size`,
        );
        return row?.size ?? '?';
      }),
    );
    // Warm-up: one round each, not counted.
    for (const log of logs) await round(log);
    const rounds: Record<IdKind, Round[]> = { 'random (v4)': [], 'time-ordered (v7)': [] };
    for (let index = 0; index < ROUNDS; index += 1) {
      for (const log of index % 2 === 0 ? logs : [...logs].reverse()) rounds[log.kind].push(await round(log));
      process.stderr.write('.');
    }
    process.stderr.write('\n');
    const fmt = (value: number, digits = 1): string => value.toFixed(digits);
    const lines = [
      '| invocation ids | Postgres CPU µs per outcome (rounds) | WAL bytes per outcome | µs per outcome | primary key |',
      '|---|---|---|---|---|',
      ...KINDS.map((kind, index) => {
        const list = rounds[kind];
        const cpu = list.map((r) => r.cpuUsPerOutcome);
        return `| ${kind} | ${fmt(median(cpu))} (${cpu.map((v) => fmt(v)).join(', ')}) | ${fmt(median(list.map((r) => r.walBytesPerOutcome)), 0)} | ${fmt(median(list.map((r) => r.usPerOutcome)))} | ${keySizes[index] ?? '?'} |`;
      }),
    ];
    const ratio = (pick: (r: Round) => number): number =>
      median(rounds['time-ordered (v7)'].map((r, i) => pick(r) / pick(rounds['random (v4)'][i] ?? r)));
    const ratios = {
      cpu: ratio((r) => r.cpuUsPerOutcome),
      wal: ratio((r) => r.walBytesPerOutcome),
      time: ratio((r) => r.usPerOutcome),
    };
    process.stdout.write(
      `${lines.join('\n')}\n\ntime-ordered ÷ random, medians of per-round ratios: Postgres CPU ${fmt(ratios.cpu, 3)}, ` +
        `WAL ${fmt(ratios.wal, 3)}, time ${fmt(ratios.time, 3)}\n`,
    );
    const file = await results.write(
      { rows: ROWS, rounds: ROUNDS, batches: BATCHES, batch: BATCH },
      { ratios, rounds: byKind(rounds) },
    );
    process.stdout.write(`\nresults: ${file}\n`);
  } finally {
    for (const log of logs) {
      await log.dataSource.destroy();
      await log.database.drop();
    }
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
