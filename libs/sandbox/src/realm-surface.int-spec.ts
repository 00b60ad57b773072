// The realm's global surface is an allowlist (issue 17, class 7): a tool walks every own property, string- and
// symbol-keyed, of its compartment's global object and of every object reachable from it (values, accessors and
// prototypes, plus the intrinsics only syntax reaches, and ctx and env), and the listing must be exactly the one
// docs/sandbox.md publishes between its `realm-surface` markers.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SandboxRuntime } from './sandbox-runtime';
import { NODE_MAJOR, expectSucceeded, recordingBridge, request } from './sandbox-test.fixtures';

/** One line per reachable object, `path: key key …`, in breadth-first order from the global, keys sorted. */
export const WALK = `const seen = new Map();
const queue = [];
const visit = (value, path) => {
  if ((typeof value === 'object' && value !== null) || typeof value === 'function') {
    if (!seen.has(value)) {
      seen.set(value, path);
      queue.push(value);
    }
  }
};
const name = (key) => (typeof key === 'symbol' ? '[' + String(key) + ']' : key);
visit(globalThis, 'globalThis');
// Intrinsics no global property leads to: only syntax or a call reaches them.
const roots = [
  ['%AsyncFunction%', (async () => {}).constructor],
  ['%GeneratorFunction%', function* () {}.constructor],
  ['%AsyncGeneratorFunction%', async function* () {}.constructor],
  ['%ArrayIteratorPrototype%', Object.getPrototypeOf([][Symbol.iterator]())],
  ['%MapIteratorPrototype%', Object.getPrototypeOf(new Map().entries())],
  ['%SetIteratorPrototype%', Object.getPrototypeOf(new Set().values())],
  ['%StringIteratorPrototype%', Object.getPrototypeOf(''[Symbol.iterator]())],
  ['%RegExpStringIteratorPrototype%', Object.getPrototypeOf(/a/g[Symbol.matchAll](''))],
  ['%GeneratorPrototype%', Object.getPrototypeOf((function* () {})())],
  ['%AsyncGeneratorPrototype%', Object.getPrototypeOf((async function* () {})())],
  ['%Segments%', Object.getPrototypeOf(new Intl.Segmenter().segment(''))],
  // What the run hands the code besides its global.
  ['ctx', ctx],
  ['env', env],
];
const lines = [];
let next = 0;
const drain = () => {
  for (; next < queue.length; next++) {
    const object = queue[next];
    const path = seen.get(object);
    const keys = Reflect.ownKeys(object).map((key) => [name(key), key]).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    lines.push(path + ': ' + keys.map(([n]) => n).join(' '));
    visit(Object.getPrototypeOf(object), path + '.[[Prototype]]');
    for (const [n, key] of keys) {
      const desc = Reflect.getOwnPropertyDescriptor(object, key);
      if ('value' in desc) visit(desc.value, path + '.' + n);
      if (desc.get) visit(desc.get, path + '.' + n + '[get]');
      if (desc.set) visit(desc.set, path + '.' + n + '[set]');
    }
  }
};
drain();
for (const [label, value] of roots) {
  visit(value, label);
  drain();
}
return lines;`;

/** A block of docs/sandbox.md between `<!-- name:start -->` and `<!-- name:end -->`, line by line, or undefined. */
function block(doc: string, name: string, fence: string): string[] | undefined {
  const found = new RegExp(
    `<!-- ${name}:start -->\\s*\`\`\`${fence}\\n([\\s\\S]*?)\`\`\`\\s*<!-- ${name}:end -->`,
  ).exec(doc);
  // Compared without trailing whitespace: the docs' formatter trims it (an object with no own keys ends in ': ').
  return found?.[1]
    ?.split('\n')
    .map((line) => line.trimEnd())
    .filter((line) => line.length > 0);
}

/**
 * The list docs/sandbox.md publishes for the Node that runs this test: the isolate's V8 is the host's, so a newer Node
 * shows newer ECMAScript. The main list is Node 20's; each `realm-surface-node<N>` block, from the oldest up to this
 * Node's major, is a diff applied to it (`- line` leaves, `+ line` joins).
 */
function publishedSurface(): string[] {
  const doc = readFileSync(join(__dirname, '..', '..', '..', 'docs', 'sandbox.md'), 'utf8');
  const list = block(doc, 'realm-surface', 'text');
  if (list === undefined) throw new Error('docs/sandbox.md has no realm-surface block');
  const surface = new Set(list);
  for (let major = 21; major <= NODE_MAJOR; major += 1) {
    for (const line of block(doc, `realm-surface-node${major}`, 'diff') ?? []) {
      if (line.startsWith('- ')) surface.delete(line.slice(2));
      else if (line.startsWith('+ ')) surface.add(line.slice(2));
      else throw new Error(`docs/sandbox.md, realm-surface-node${major}: not a diff line: ${line}`);
    }
  }
  return [...surface];
}

describe('the realm surface', () => {
  const runtime = new SandboxRuntime({ entryMode: 'async' });
  afterAll(() => runtime.dispose());

  async function walk(): Promise<string[]> {
    const outcome = expectSucceeded(
      await runtime.run(request(WALK, { limits: { timeoutMs: 10_000 } as never }), recordingBridge()),
    );
    return outcome.result as string[];
  }

  it('is exactly the allowlist docs/sandbox.md publishes', async () => {
    const surface = (await walk()).map((line) => line.trimEnd());
    if (process.env.PRINT_REALM_SURFACE === '1') process.stdout.write(`${surface.join('\n')}\n`);
    const published = publishedSurface();
    const unlisted = surface.filter((line) => !published.includes(line));
    const gone = published.filter((line) => !surface.includes(line));
    expect({ unlisted, gone }).toEqual({ unlisted: [], gone: [] });
  });

  it('reaches no SES power, by name or by registered symbol', async () => {
    const surface = (await walk()).join('\n');
    for (const power of [
      'harden',
      'lockdown',
      'Compartment',
      'repairIntrinsics',
      'hardenIntrinsics',
      'getStackString',
    ]) {
      expect(surface).not.toMatch(new RegExp(`(^|[ .\\[(])${power}([ \\])]|$)`, 'm'));
    }
  });

  it('is the same in a second run (nothing a run sees is left over from the last)', async () => {
    const first = await walk();
    expect(await walk()).toEqual(first);
  });
});
