import { SandboxRuntime } from './sandbox-runtime';
import { expectSucceeded, recordingBridge, request } from './sandbox-test.fixtures';

// A run gets the compartment of a run that ended when that run left it exactly as it was made, and a new one
// otherwise (isolate/prelude.js: pristine). What the next run can observe must be what a new compartment shows.

/** Everything a run can see of its global: own keys in order, each property's attributes and kind, the prototype. */
const FINGERPRINT = `
const describe = (key) => {
  const d = Object.getOwnPropertyDescriptor(globalThis, key);
  return String(key) + ':' + (d.writable ? 'w' : '') + (d.enumerable ? 'e' : '') + (d.configurable ? 'c' : '') +
    ('value' in d ? typeof d.value : 'accessor');
};
return [
  Reflect.ownKeys(globalThis).map(describe).join(','),
  Object.isExtensible(globalThis),
  Object.getPrototypeOf(globalThis) === Object.prototype,
  typeof leak, typeof late, typeof fromSignal,
  typeof Array, typeof JSON.stringify, typeof console.log,
];`;

/** Ways a run can change its global, each followed by a run that must see a global as made. */
const CHANGES: { name: string; code: string }[] = [
  { name: 'adds a property', code: 'globalThis.leak = { secret: 1 }; return 1' },
  { name: 'adds a symbol-keyed property', code: 'globalThis[Symbol.for("leak")] = 1; return 1' },
  { name: 'adds a non-enumerable property', code: 'Object.defineProperty(globalThis, "leak", { value: 1 }); return 1' },
  {
    name: 'adds an accessor',
    code: 'Object.defineProperty(globalThis, "leak", { get: () => 1, configurable: true }); return 1',
  },
  { name: 'deletes a built-in', code: 'delete globalThis.Array; return 1' },
  { name: 'replaces a built-in', code: 'globalThis.Array = function Array() {}; return 1' },
  {
    name: 'deletes a built-in and adds it back (the order changes)',
    code: 'const A = Array; delete globalThis.Array; globalThis.Array = A; return 1',
  },
  { name: 'changes an attribute', code: 'Object.defineProperty(globalThis, "JSON", { enumerable: true }); return 1' },
  {
    name: 'makes a property read-only',
    code: 'Object.defineProperty(globalThis, "Math", { writable: false }); return 1',
  },
  { name: 'replaces the console', code: 'globalThis.console = { log() {} }; return 1' },
  { name: 'deletes the console', code: 'delete globalThis.console; return 1' },
  { name: 'changes the prototype', code: 'Object.setPrototypeOf(globalThis, { leak: 1 }); return 1' },
  { name: 'prevents extensions', code: 'Object.preventExtensions(globalThis); return 1' },
  { name: 'freezes the global', code: 'Object.freeze(globalThis); return 1' },
  {
    name: 'changes it in a microtask after its result is in',
    code: 'Promise.resolve().then(() => 0).then(() => 0).then(() => { globalThis.late = 1; }); return 1',
  },
  {
    name: 'throws after changing it',
    code: 'globalThis.leak = 1; throw new Error("after the change")',
  },
  {
    name: 'changes it from a pi signal listener, which runs as the run ends',
    code: `export default function (pi) {
  pi.registerTool({ name: 't', description: 't', parameters: {}, async execute(_id, _params, signal) {
    signal.addEventListener('abort', () => { globalThis.fromSignal = 1; });
    return { content: [] };
  } });
}`,
  },
];

async function idle(): Promise<void> {
  // The next compartment is prepared once the isolate is idle (a setImmediate after the run's answer).
  await new Promise((resolve) => setImmediate(resolve));
  await new Promise((resolve) => setImmediate(resolve));
}

describe('SandboxRuntime: compartments used again', () => {
  let runtime: SandboxRuntime;
  let made: string;

  beforeAll(async () => {
    runtime = new SandboxRuntime();
    const first = await runtime.run(request(FINGERPRINT), recordingBridge());
    made = JSON.stringify(expectSucceeded(first).result);
    await idle();
  });

  afterAll(() => runtime.dispose());

  /** Runs `code`, then the fingerprint: what the next run saw, and how many compartments were made meanwhile. */
  async function nextRunAfter(code: string): Promise<{ seen: string; madeMeanwhile: number }> {
    const before = runtime.stats().compartmentsMade;
    await runtime.run(request(code), recordingBridge());
    await idle();
    const next = await runtime.run(request(FINGERPRINT), recordingBridge());
    await idle();
    return {
      seen: JSON.stringify(expectSucceeded(next).result),
      madeMeanwhile: runtime.stats().compartmentsMade - before,
    };
  }

  it('a run that leaves its global as it was made gives its compartment to the next run', async () => {
    const before = runtime.stats().compartmentsMade;
    for (let index = 0; index < 20; index += 1) {
      const outcome = await runtime.run(request(`console.log("run ${index}");\n${FINGERPRINT}`), recordingBridge());
      expect(JSON.stringify(expectSucceeded(outcome).result)).toBe(made);
      // Each run has its own console, though the compartment is the same.
      expect(outcome.logs).toEqual([`run ${index}`]);
      await idle();
    }
    // Twenty runs, and at most the one spare beside the compartment they passed on.
    expect(runtime.stats().compartmentsMade - before).toBeLessThanOrEqual(1);
  });

  it.each(CHANGES)('a run that $name: the next run gets a new compartment', async ({ code }) => {
    const { seen, madeMeanwhile } = await nextRunAfter(code);
    expect(seen).toBe(made);
    expect(madeMeanwhile).toBeGreaterThan(0);
  });

  it('a run that changed its global and put everything back as it was passes its compartment on', async () => {
    // Nothing tells the two apart: the next run sees the global as made.
    const { seen, madeMeanwhile } = await nextRunAfter('const A = Array; Array = null; Array = A; return 1');
    expect(seen).toBe(made);
    expect(madeMeanwhile).toBe(0);
  });

  it('everything a run reaches from its global, but the global and its console, is frozen', async () => {
    // The premise of reuse: a run can leave state only on the global itself, which the check reads.
    const outcome = await runtime.run(
      request(`
const seen = new Set([globalThis, console]);
const queue = Reflect.ownKeys(globalThis)
  .map((key) => Object.getOwnPropertyDescriptor(globalThis, key))
  .flatMap((d) => [d.value, d.get, d.set]);
const open = [];
while (queue.length > 0) {
  const value = queue.pop();
  if ((typeof value !== 'object' || value === null) && typeof value !== 'function') continue;
  if (seen.has(value)) continue;
  seen.add(value);
  if (!Object.isFrozen(value)) open.push(String(value.name ?? Object.prototype.toString.call(value)));
  queue.push(Object.getPrototypeOf(value));
  for (const key of Reflect.ownKeys(value)) {
    const d = Object.getOwnPropertyDescriptor(value, key);
    queue.push(d.value, d.get, d.set);
  }
}
return [seen.size > 500, open];`),
      recordingBridge(),
    );
    expect(expectSucceeded(outcome).result).toEqual([true, []]);
  });

  it('runs in flight together each get a compartment of their own', async () => {
    const bridge = recordingBridge({
      wait: (input) => new Promise((resolve) => setTimeout(() => resolve({ input }), 20)),
    });
    const runs = ['a', 'b', 'c', 'd'].map((name) =>
      runtime.run(
        request(`globalThis.mark ??= ${JSON.stringify(name)}; await ctx.tools.wait({}); return globalThis.mark`),
        bridge,
      ),
    );
    const results = (await Promise.all(runs)).map((outcome) => expectSucceeded(outcome).result);
    expect(results).toEqual(['a', 'b', 'c', 'd']);
    await idle();
    const next = await runtime.run(request(FINGERPRINT), recordingBridge());
    expect(JSON.stringify(expectSucceeded(next).result)).toBe(made);
  });
});
