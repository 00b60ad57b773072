/**
 * A burst of invocations of succeeding, failing and slow tools (10,000 by default; RELIABILITY_BURST sets it): every
 * call reaches exactly one terminal state, each tool's usage and failure counters equal what ran, and the
 * auto-disables match the sequences sent (three consecutive failures disable a tool, a success in between does not).
 */
import { Stack } from '../e2e/stack';
import { drive, finalStates, report, toolRecord, type Call } from './load';

const BURST = Number(process.env.RELIABILITY_BURST ?? 10_000);
const CONCURRENCY = 200;

const tool = (title: string, code: string): Record<string, unknown> => ({
  title,
  description: title,
  inputSchema: { type: 'object' },
  code,
});

describe('burst (reliability)', () => {
  let stack: Stack;
  let key: string;

  beforeAll(async () => {
    stack = await new Stack({ workerEnv: { SANDBOX_PROCESSES: '2' } }).start();
    ({ key } = await stack.tenant('burst'));
  }, 180_000);

  // Set by a before hook that may have failed before assigning it: close only what started.
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- see above
  afterAll(() => stack?.stop(), 120_000);

  it(`ends every one of ${BURST} calls once, with exact counters and auto-disables`, async () => {
    const ok = await stack.createTool(key, tool('ok', 'return { n: input.n };'));
    const slow = await stack.createTool(
      key,
      tool('slow', 'await new Promise((resolve) => setTimeout(resolve, 100)); return { n: input.n };'),
    );
    const failing = await stack.createTool(key, tool('failing', 'throw new Error("always " + input.n);'));
    // Sequences, each sent one call at a time beside the burst: whether a tool is disabled depends on their order.
    const flaky = 'if (input.fail) throw new Error("asked to fail"); return "fine";';
    const sequences = [
      { name: 'fail fail ok fail fail', steps: [true, true, false, true, true], disabled: false, failures: 2 },
      { name: 'fail fail fail', steps: [true, true, true], disabled: true, failures: 3 },
      { name: 'ok fail fail', steps: [false, true, true], disabled: false, failures: 2 },
    ];
    const flakyTools = await Promise.all(
      sequences.map((sequence) => stack.createTool(key, tool(`flaky ${sequence.name}`, flaky))),
    );
    const kinds = [ok, ok, ok, ok, ok, ok, slow, slow, slow, failing];

    const chains = sequences.map(async (sequence, index) => {
      const target = flakyTools[index];
      if (target === undefined) throw new Error('no tool');
      const calls: Call[] = [];
      for (const [step, fail] of sequence.steps.entries()) {
        const [call] = await drive(1, 1, () => ({
          tag: `sequence "${sequence.name}"`,
          call: () => stack.invoke(key, { tool: target.toolName, input: { fail } }),
        }));
        if (call) calls.push(call);
        // The registry applies outcomes in the order it reads them: the next call waits until this one counted.
        await toolRecord(stack, key, target.id, (r) => r.usageCount === step + 1);
      }
      return calls;
    });
    const burst = await drive(BURST, CONCURRENCY, (index) => {
      const target = kinds[index % kinds.length] ?? ok;
      return {
        tag: target === ok ? 'ok' : target === slow ? 'slow' : 'failing',
        call: () => stack.invoke(key, { tool: target.toolName, input: { n: index } }),
      };
    });
    const sequenced = (await Promise.all(chains)).flat();
    const calls = await finalStates(stack, key, [...burst, ...sequenced]);

    const counted = async (target: { id: string }, tag: string) => {
      const accepted = calls.filter((call) => call.tag === tag && call.id !== undefined).length;
      return { accepted, record: await toolRecord(stack, key, target.id, (r) => r.usageCount >= accepted) };
    };
    const okCount = await counted(ok, 'ok');
    const slowCount = await counted(slow, 'slow');
    const failingCount = await counted(failing, 'failing');
    const flakyRecords = await Promise.all(flakyTools.map((target) => toolRecord(stack, key, target.id, () => true)));
    const counters = ({ usageCount, failureCount, status }: typeof okCount.record) => ({
      usageCount,
      failureCount,
      status,
    });
    report(`burst of ${BURST} (+ ${sequenced.length} sequenced)`, calls, {
      ok: counters(okCount.record),
      slow: counters(slowCount.record),
      failing: counters(failingCount.record),
      sequences: flakyRecords.map((r, i) => ({ sequence: sequences[i]?.name, ...counters(r) })),
    });

    // Exactly one terminal state each: answered once, with a distinct id, ended succeeded or failed, or refused
    // because the failing tool was disabled by then (it never ran).
    const ids = calls.flatMap((call) => (call.id === undefined ? [] : [call.id]));
    expect(new Set(ids).size).toBe(ids.length);
    const unexpected = calls.filter(
      (call) =>
        !(
          (call.id !== undefined && ['succeeded', 'failed'].includes(call.outcome)) ||
          (call.tag === 'failing' && call.outcome === 'TOOL_DISABLED')
        ),
    );
    expect(unexpected.slice(0, 10)).toEqual([]);
    expect(calls.filter((call) => call.tag === 'ok' && call.outcome !== 'succeeded')).toEqual([]);
    expect(calls.filter((call) => call.tag === 'slow' && call.outcome !== 'succeeded')).toEqual([]);
    expect(calls.filter((call) => call.tag === 'failing' && call.outcome === 'succeeded')).toEqual([]);
    // Counters equal what ran, exactly.
    expect(okCount.record).toMatchObject({ usageCount: okCount.accepted, failureCount: 0, status: 'active' });
    expect(slowCount.record).toMatchObject({ usageCount: slowCount.accepted, failureCount: 0, status: 'active' });
    expect(failingCount.record).toMatchObject({
      usageCount: failingCount.accepted,
      failureCount: failingCount.accepted,
      status: 'disabled',
    });
    for (const [index, sequence] of sequences.entries()) {
      expect({ sequence: sequence.name, ...flakyRecords[index] }).toMatchObject({
        sequence: sequence.name,
        usageCount: sequence.steps.length,
        failureCount: sequence.failures,
        status: sequence.disabled ? 'disabled' : 'active',
      });
    }
  }, 900_000);
});
