/**
 * A noisy neighbour: one tenant floods infinite-loop and memory-hog tools at its full quota (its concurrency cap,
 * with more callers than that, so it is always at the cap and refused beyond it; it enables its tools again each
 * time their failures disable them) while another tenant sends a steady trickle. The quiet tenant's p99 under the flood is printed beside its p99 alone (the issue asks for at most
 * 3×; timing is measured, not asserted); the test asserts that every quiet call succeeded.
 */
import { Stack } from '../e2e/stack';
import { drive, p99, paced, report } from './load';

const QUOTA = 16;
const TRICKLE = Number(process.env.RELIABILITY_TRICKLE ?? 100);
const TRICKLE_INTERVAL_MS = 100;

describe('noisy neighbour (reliability)', () => {
  let stack: Stack;
  let noisy: string;
  let quiet: string;

  beforeAll(async () => {
    stack = await new Stack({
      gatewayEnv: { MAX_QUEUED_PER_TENANT: String(QUOTA) },
      workerEnv: { SANDBOX_PROCESSES: '2' },
    }).start();
    ({ key: noisy } = await stack.tenant('noisy'));
    ({ key: quiet } = await stack.tenant('quiet'));
  }, 180_000);

  // Set by a before hook that may have failed before assigning it: close only what started.
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- see above
  afterAll(() => stack?.stop(), 120_000);

  it("keeps the quiet tenant's calls succeeding while another floods hostile tools", async () => {
    const loop = await stack.createTool(noisy, {
      title: 'loop',
      description: 'never returns',
      inputSchema: { type: 'object' },
      timeoutMs: 1_000,
      code: 'while (true) {}',
    });
    const hog = await stack.createTool(noisy, {
      title: 'hog',
      description: 'grows until its memory limit',
      inputSchema: { type: 'object' },
      timeoutMs: 2_000,
      code: 'const keep = []; for (;;) keep.push(new Array(1e5).fill(keep.length));',
    });
    const echo = await stack.createTool(quiet, {
      title: 'echo',
      description: 'echo',
      inputSchema: { type: 'object' },
      code: 'return { n: input.n };',
    });
    const trickle = async (tag: string) => {
      const start = Date.now();
      return drive(TRICKLE, 8, (index) => ({
        tag,
        call: async () => {
          await paced(start, index, TRICKLE_INTERVAL_MS);
          return stack.invoke(quiet, { tool: echo.toolName, input: { n: index } });
        },
      }));
    };

    // Warm first: the first calls of a tool fetch it from the registry, create its tenant's isolate and compile it,
    // and one of them would be the p99 of the calls alone.
    for (let n = 0; n < 5; n++) await stack.invoke(quiet, { tool: echo.toolName, input: { n } });
    const alone = await trickle('quiet alone');
    // An object, so that the lanes read what the test sets after they started.
    const flooding = { on: true };
    const flood: Promise<void>[] = [];
    const noise: Awaited<ReturnType<typeof drive>> = [];
    // Twice the quota of callers, each sending again as soon as it is answered, until the trickle is over.
    for (let lane = 0; lane < QUOTA * 2; lane += 1) {
      flood.push(
        (async () => {
          while (flooding.on) {
            const target = lane % 2 === 0 ? loop : hog;
            const [call] = await drive(1, 1, () => ({
              tag: target === loop ? 'noisy loop' : 'noisy hog',
              call: () => stack.invoke(noisy, { tool: target.toolName, input: {} }),
            }));
            if (call) noise.push(call);
            // Three failures in a row disable a tool: a noisy tenant enables it again and goes on.
            if (call?.outcome === 'TOOL_DISABLED') await stack.registry('POST', `/v1/tools/${target.id}/enable`, noisy);
            // A refusal is answered at once: a short pause, so a refused caller does not spin.
            if (call?.status === 429) await new Promise((resolve) => setTimeout(resolve, 20));
          }
        })(),
      );
    }
    const under = await trickle('quiet under flood');
    flooding.on = false;
    await Promise.all(flood);

    const aloneP99 = p99(alone.map((call) => call.waitedMs));
    const underP99 = p99(under.map((call) => call.waitedMs));
    report('noisy neighbour', [...alone, ...under, ...noise], {
      quietP99AloneMs: aloneP99,
      quietP99UnderFloodMs: underP99,
      ratio: Math.round((underP99 / Math.max(1, aloneP99)) * 10) / 10,
    });

    expect([...alone, ...under].filter((call) => call.outcome !== 'succeeded')).toEqual([]);
    // The flood did run (and hit its limits), else the measurement means nothing.
    expect(noise.some((call) => call.outcome === 'failed')).toBe(true);
  }, 600_000);
});
