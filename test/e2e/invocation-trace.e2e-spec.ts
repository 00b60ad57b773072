/**
 * The invocation stages (INVOCATION_TRACE_CHANNEL) that `npm run bench:trace` reads: on the real stack, with the
 * benchmark's recorder loaded into every service, one synchronous call passes each stage once, in its gateway and in
 * the executor that ran it, in the order causality gives them.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { INVOCATION_STAGES } from '@toolhost/contracts';
import { recordedStages, switchRecording } from '../../bench/trace/recorder-control';
import type { RecordedStage } from '../../bench/trace/stage-recorder';
import { stageTimes } from '../../bench/trace/stage-segments';
import { Stack } from './stack';

const RECORDER = resolve(__dirname, '../../dist/bench/trace/stage-recorder.js');

describe('invocation trace (e2e)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'toolhost-trace-test-'));
  let stack: Stack;

  beforeAll(async () => {
    stack = await new Stack({ env: { NODE_OPTIONS: `--require ${RECORDER}`, TOOLHOST_TRACE_DIR: dir } }).start();
  }, 120_000);

  afterAll(async () => {
    // Set by a before hook that may have failed before assigning it: stop only what started.
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- see above
    await stack?.stop();
    rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  it('passes every stage once, in order, in the gateway and the executor', async () => {
    const { key } = await stack.tenant('trace');
    const tool = await stack.createTool(key, {
      title: 'Upper',
      description: 'Upper-cases a word',
      inputSchema: { type: 'object' },
      code: 'export async function handle(input) { return input.word.toUpperCase(); }',
    });
    await switchRecording(dir, true);
    const answer = await stack.invoke(key, { tool: tool.toolName, input: { word: 'trace' } });
    expect(answer.body).toMatchObject({ status: 'succeeded', result: 'TRACE' });
    const id = answer.body.id as string;
    const stagesOf = (rows: RecordedStage[]): string[] =>
      rows.filter(([, invocationId]) => invocationId === id).map(([stage]) => stage);
    // The job's completion is recorded after the caller's answer: read until it is in.
    const rows = await recordedStages(dir, (read) => stagesOf(read).includes('executor.completed'));
    expect(stagesOf(rows).sort()).toEqual([...INVOCATION_STAGES].sort());
    const mine = rows.filter(([, invocationId]) => invocationId === id);
    const at = stageTimes(mine).get(id);
    const chains = [
      ['gateway.received', 'gateway.enqueue', 'gateway.enqueued'],
      ['gateway.enqueue', 'executor.taken', 'executor.sandbox', 'executor.sandboxed', 'executor.answer'],
      ['executor.answer', 'gateway.reply', 'gateway.respond'],
      ['executor.answer', 'executor.answered', 'executor.completed'],
    ];
    for (const chain of chains) {
      const times = chain.map((stage) => at?.get(stage));
      // Each stage of a chain at or after the one before it: the list of times, sorted, is itself.
      expect(times).toEqual([...times].sort((a, b) => (a === undefined || b === undefined ? 0 : Number(a - b))));
    }
  }, 60_000);
});
