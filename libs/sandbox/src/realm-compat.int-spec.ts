// The realm stays standard JavaScript (issue 17): everyday snippets, as a tool author writes them, give the same
// answer in the sandbox as in plain Node; where toolhost differs on purpose the difference is in a second table,
// documented in docs/sandbox.md ("Differences from Node"), and pinned here.
import { SandboxRuntime } from './sandbox-runtime';
import { NODE_MAJOR, recordingBridge, request } from './sandbox-test.fixtures';
import type { RunOutcome } from './sandbox.types';

// Each snippet is the body of an async function returning JSON. Node runs it with the AsyncFunction constructor in
// this process; the sandbox runs it as a tool.
const SNIPPETS: Record<string, string> = {
  // Formatting.
  'currency with toLocaleString': `return (1234.5).toLocaleString('en-US', { style: 'currency', currency: 'USD' })`,
  'grouping with toLocaleString': `return [(1234567.891).toLocaleString('en-US'), (1234567.891).toLocaleString('de-DE')]`,
  'Intl.NumberFormat in several locales': `return [new Intl.NumberFormat('en-IN').format(12345678), new Intl.NumberFormat('fr-FR', { style: 'currency', currency: 'EUR' }).format(9.5)]`,
  'percent and compact notation': `return [(0.256).toLocaleString('en-US', { style: 'percent', minimumFractionDigits: 1 }), new Intl.NumberFormat('en', { notation: 'compact' }).format(1234567)]`,
  'number to string': `return [(12.345).toFixed(1), (1e21).toString(), (255).toString(16), Number('0x1f'), (0.1 + 0.2).toPrecision(3), parseFloat('3.14abc')]`,
  'BigInt formatting and arithmetic': `return [(123456789012345678901234567890n).toLocaleString('en-US'), String(2n ** 64n), BigInt.asUintN(8, 257n).toString()]`,
  // Dates and time zones.
  'toLocaleDateString with options': `return new Date(Date.UTC(2024, 0, 15, 12)).toLocaleDateString('en-US', { timeZone: 'UTC', year: 'numeric', month: 'long', day: 'numeric' })`,
  'toLocaleString in another time zone': `return [new Date(0).toLocaleString('en-GB', { timeZone: 'Asia/Tokyo' }), new Date(0).toLocaleTimeString('en-US', { timeZone: 'America/Los_Angeles' })]`,
  'DateTimeFormat with time zone names': `return new Intl.DateTimeFormat('en-US', { timeZone: 'America/New_York', timeZoneName: 'short', hour: 'numeric' }).format(new Date(Date.UTC(2024, 6, 1, 16)))`,
  'ISO dates and parsing': `return [new Date('2024-03-10T12:00:00Z').toISOString(), Date.parse('2024-03-10'), new Date(Date.UTC(2024, 1, 29)).getUTCDay(), new Date(8.64e15 + 1).getTime()]`,
  'relative time and weekday names': `return [new Intl.RelativeTimeFormat('en', { numeric: 'auto' }).format(-1, 'day'), new Date(Date.UTC(2020, 1, 29)).toLocaleDateString('de-DE', { timeZone: 'UTC', weekday: 'long' })]`,
  'local time zone and the clock': `const d = new Date(2024, 0, 1, 10); return [d.getHours(), d.getTimezoneOffset() === new Date(2024, 0, 1).getTimezoneOffset(), typeof Date.now(), Date.now() > 1.7e12, Intl.DateTimeFormat().resolvedOptions().timeZone]`,
  'date arithmetic': `const d = new Date(Date.UTC(2024, 0, 31)); d.setUTCMonth(d.getUTCMonth() + 1); return [d.toISOString(), Math.round((Date.UTC(2024, 11, 25) - Date.UTC(2024, 0, 1)) / 864e5)]`,
  // Collation and text.
  'localeCompare sorts case-insensitively': `return ['b', 'a', 'C'].sort((a, b) => a.localeCompare(b))`,
  'Collator by locale': `return [['ä', 'a', 'z'].sort(new Intl.Collator('de').compare), ['ä', 'a', 'z'].sort(new Intl.Collator('sv').compare)]`,
  'localeCompare with options': `return ['a'.localeCompare('B', undefined, { sensitivity: 'base' }), 'a'.localeCompare('A', 'en', { sensitivity: 'base' }), 'résumé'.localeCompare('resume', 'en', { sensitivity: 'accent' })]`,
  'numeric collation': `return ['item10', 'item2', 'item1'].sort(new Intl.Collator(undefined, { numeric: true }).compare)`,
  'locale case mapping': `return ['İstanbul'.toLocaleLowerCase('tr'), 'title'.toLocaleUpperCase('tr'), 'straße'.toUpperCase(), 'ǅ'.toLowerCase()]`,
  'plural rules and list format': `return [new Intl.PluralRules('en-US', { type: 'ordinal' }).select(2), new Intl.ListFormat('en', { type: 'conjunction' }).format(['a', 'b', 'c'])]`,
  'graphemes with Segmenter': `return [...new Intl.Segmenter('en', { granularity: 'grapheme' }).segment('👨‍👩‍👧e\u0301')].length`,
  'normalize and code points': `return ['e\u0301'.normalize('NFC').length, [...'😀a'].length, '😀'.codePointAt(0), String.fromCodePoint(128512) === '😀']`,
  // Classes and subclasses of built-ins.
  'a subclass of Array': `class Stack extends Array { peek() { return this[this.length - 1]; } }
const s = Stack.from([1, 2, 3]);
return [s.peek(), s instanceof Stack, s.map((x) => x * 2) instanceof Stack, Array.isArray(s), s.length]`,
  'a subclass of Error': `class MyError extends Error { constructor(m, options) { super(m, options); this.name = 'MyError'; } }
const e = new MyError('x', { cause: 'why' });
return [e instanceof Error, e.name, String(e), e.cause, e.stack.split('\\n')[0], Object.prototype.toString.call(e)]`,
  'a subclass of Map': `class DefaultMap extends Map { get(k) { return super.has(k) ? super.get(k) : 0; } }
const m = new DefaultMap([['a', 1]]); return [m.get('a'), m.get('b'), m.size, m instanceof Map]`,
  'a subclass of Promise': `class P extends Promise {}
const p = P.resolve(1); return [p instanceof P, p.then((x) => x) instanceof P, await P.resolve(2), await P.all([1, P.resolve(2)])]`,
  'own properties named like Object.prototype methods (the override mistake)': `const o = Object.assign({}, { hasOwnProperty: 3, toString: 'x', constructor: 'c' });
const p = {}; p.valueOf = () => 42; p.toLocaleString = () => 'mine';
return [o.hasOwnProperty, o.toString, o.constructor, p + 1, p.toLocaleString(), JSON.stringify(o)]`,
  'old-style inheritance assigns constructor': `function Animal(name) { this.name = name; }
Animal.prototype.speak = function () { return this.name + ' speaks'; };
function Dog(name) { Animal.call(this, name); }
Dog.prototype = Object.create(Animal.prototype);
Dog.prototype.constructor = Dog;
Dog.prototype.toString = function () { return 'Dog ' + this.name; };
const d = new Dog('rex'); return [d.speak(), String(d), d.constructor === Dog, d instanceof Animal]`,
  'classes with private fields, static blocks and accessors': `class Counter { #n = 0; static made = 0; static { Counter.ready = true; } constructor() { Counter.made++; } inc() { return ++this.#n; } get value() { return this.#n; } toJSON() { return { n: this.#n }; } }
const c = new Counter(); c.inc(); c.inc(); return [c.value, Counter.made, Counter.ready, JSON.stringify(c), Counter.prototype.hasOwnProperty('value')]`,
  'objects of your own can be frozen, sealed and extended': `const o = Object.freeze({ a: 1 }); const s = Object.seal({ b: 1 }); s.b = 2;
const t = {}; Object.defineProperty(t, 'x', { value: 1, enumerable: false }); Object.setPrototypeOf(t, { y: 2 });
return [Object.isFrozen(o), s.b, Object.keys(t), t.y, Reflect.defineProperty(o, 'z', { value: 1 })]`,
  // Typed arrays and binary data.
  'Float64Array and Float32Array': `return [Array.from(new Float64Array([1.5, 2.5]).map((x) => x * 2)), Array.from(new Float32Array([0.1])), Float64Array.BYTES_PER_ELEMENT]`,
  'DataView floats and endianness': `const v = new DataView(new ArrayBuffer(8)); v.setFloat64(0, Math.PI, true);
return [v.getFloat64(0, true), v.getUint8(0), new Uint8Array(v.buffer)[7], v.getFloat32(0)]`,
  'typed array views and copies': `const b = new Uint8Array([1, 2, 3, 4]); const sub = b.subarray(1, 3); sub[0] = 9;
return [Array.from(b), Array.from(b.slice(2)), new ArrayBuffer(8).slice(2).byteLength, Array.from(new Uint16Array(new Uint8Array([1, 0, 2, 0]).buffer)), Array.from(new Int8Array(3).fill(-1))]`,
  'structuredClone of everyday values': `const src = { d: new Date(0), m: new Map([[1, { a: [1, 2] }]]), s: new Set(['x']), r: /a+/gi, u: new Uint8Array([1, 2]), n: null, big: 10n, nested: [[1], { deep: true }] };
const c = structuredClone(src);
// Tags, not instanceof: under jest, Node's structuredClone answers objects of another realm.
const tag = (x) => Object.prototype.toString.call(x);
return [tag(c.d), c.d.getTime(), c.m.get(1).a, c.m.get(1) !== src.m.get(1), [...c.s], c.r.source + c.r.flags, Array.from(c.u), c.u.buffer !== src.u.buffer, c.n, String(c.big), c.nested]`,
  'structuredClone keeps cycles and refuses functions': `const o = { list: [] }; o.self = o; o.list.push(o); const c = structuredClone(o);
let refused; try { structuredClone({ f() {} }); } catch (e) { refused = e.name; }
const err = structuredClone(new RangeError('bad'));
return [c.self === c, c.list[0] === c, c !== o, refused, err.name, err.message, Object.keys(err)]`,
  // Regular expressions.
  'named groups, lookbehind and matchAll': `const m = '2024-01-15'.match(/(?<y>\\d{4})-(?<mo>\\d{2})-(?<d>\\d{2})/);
return [m.groups.y, '$10 €20'.match(/(?<=\\$)\\d+/)[0], [...'a1b2c3'.matchAll(/[a-z](\\d)/g)].map((x) => x[1]), /\\p{L}+/u.test('héllo')]`,
  'replace with patterns and callbacks': `return ['2024-01-15'.replace(/(\\d+)-(\\d+)-(\\d+)/, '$3/$2/$1'), 'aBc'.replace(/b/i, (x) => x.toUpperCase() + '!'), 'a.b.c'.replaceAll('.', '/'), 'x'.padStart(3, '-'), ' t '.trim()]`,
  'sticky, dotAll and indices': `const r = /a./sy; r.lastIndex = 1; return [r.test('ba\\nc'), /b/d.exec('abc').indices[0], 'aaa'.split(/(a)/).length, RegExp('[.*+]').test('+')]`,
  // Iteration.
  'generators and iterator protocols': `function* gen() { yield 1; yield* [2, 3]; return 4; }
class Range { constructor(n) { this.n = n; } *[Symbol.iterator]() { for (let i = 0; i < this.n; i++) yield i; } }
return [[...gen()], [...new Range(3)], Array.from({ length: 3 }, (_, i) => i * i), Object.entries({ b: 1, a: 2, 1: 'x', 0: 'y' })]`,
  'Map, Set and array helpers': `const m = new Map([['a', 1], ['b', 2]]);
return [[...m.keys()], [...new Set([3, 1, 3])], [3, 1, 2].toSorted(), [1, 2, 3].with(1, 9), [1, [2, [3, [4]]]].flat(Infinity), [1, 2, 3].findLast((x) => x < 3), [1, 2, 3].at(-1)]`,
  'destructuring, spread and optional chaining': `const { a, ...rest } = { a: 1, b: 2, c: 3 }; const [x, , z = 5] = [1, 2];
return [a, rest, x, z, ({}).deep?.er ?? 'none', Math.max(...[1, 5, 3]), { ...null, ...'hi' }]`,
  // JSON.stringify passes every value through the realm's counting replacer (realm.js): the same text as Node's.
  'JSON.stringify with a property list: its order, numbers, wrappers, inherited and absent keys': `const proto = { inherited: 'i' };
const o = Object.assign(Object.create(proto), { b: 1, a: 2, 2: 'two', 10: 'ten', hidden: 'h' });
Object.defineProperty(o, 'quiet', { value: 'q', enumerable: false });
const list = ['a', 10, new String('b'), new Number(2), 'inherited', 'quiet', 'missing', 'a', {}, null];
return [JSON.stringify(o, list), JSON.stringify([o, { a: [o] }], list, 1), JSON.stringify({ a: { a: { b: 1 } } }, ['a'], '\t')]`,
  'JSON.stringify with a replacer function: holder, key order, toJSON first, omissions': `const seen = [];
const text = JSON.stringify({ x: 1, d: new Date(0), nested: { y: [1, undefined, () => 1] }, skip: 'me' }, function (key, value) {
  seen.push([key, Array.isArray(this) ? 'array' : typeof this, typeof value]);
  return key === 'skip' ? undefined : value;
}, 3);
return [text, seen]`,
  'JSON.stringify of primitives, wrappers, getters and toJSON': `let reads = 0;
const o = { get g() { reads++; return 'got'; }, n: new Number(3), s: new String('s'), b: new Boolean(false), nan: NaN, inf: -Infinity, neg: -0, toJSON(key) { return { key, g: this.g, n: this.n, s: this.s, b: this.b, nan: this.nan, inf: this.inf, neg: this.neg }; } };
return [JSON.stringify(o), reads, JSON.stringify(undefined), JSON.stringify(() => 1), JSON.stringify('a\\u0000b\\ud800'), JSON.stringify([Symbol('s')]), JSON.stringify({ a: 1 }, null, new Number(2)), JSON.stringify({ a: 1 }, null, new String('--')), JSON.stringify({ a: [] }, null, 20)]`,
  'JSON.stringify errors: cycles through a property list, BigInt': `const errors = [];
const a = { name: 'a' }; a.self = a;
for (const run of [() => JSON.stringify(a), () => JSON.stringify(a, ['self']), () => JSON.stringify({ n: 1n }), () => JSON.stringify([[a]], null, 2)]) {
  try { run(); errors.push('no error'); } catch (e) { errors.push(e.name + ': ' + e.message.split('\\n')[0]); }
}
return errors`,
  'JSON with replacer, indentation and reviver': `const text = JSON.stringify({ b: [1, { c: 2 }], a: new Date(0), u: undefined }, null, 2);
return [text, JSON.parse('{"n": 1, "d": "x"}', (k, v) => (typeof v === 'number' ? v * 10 : v)), JSON.stringify('\\u2028'), JSON.stringify({ k: 1 }, ['k'])]`,
  // Async.
  'Promise combinators': `const results = await Promise.allSettled([Promise.resolve(1), Promise.reject(new Error('no'))]);
return [results.map((r) => r.status), await Promise.any([Promise.reject(1), Promise.resolve(2)]), await Promise.race([new Promise(() => {}), 3]), await Promise.all([])]`,
  'async iteration': `async function* ticks() { for (let i = 0; i < 3; i++) yield await Promise.resolve(i); }
const out = []; for await (const t of ticks()) out.push(t);
return [out, await (async () => { try { await Promise.reject(new TypeError('t')); } catch (e) { return e.name; } })()]`,
  'microtask order': `const order = []; Promise.resolve().then(() => order.push('then')); order.push('sync'); await null; order.push('after await'); return order`,
  // Weak references and functions.
  'WeakRef and FinalizationRegistry': `const target = {}; const ref = new WeakRef(target); const registry = new FinalizationRegistry(() => {}); const token = {};
registry.register(target, 'held', token); registry.register(Symbol('unique'), 1);
let refused; try { registry.register(Symbol.for('registered'), 1); } catch (e) { refused = e.name; }
return [ref.deref() === target, registry.unregister(token), registry.unregister(token), Object.prototype.toString.call(registry), refused]`,
  'Function constructor, bind and toString of your own functions': `const add = new Function('a', 'b', 'return a + b'); const inc = add.bind(null, 1);
function named(a, b) { return a; }
return [add(1, 2), inc(5), inc.name, named.length, String(named), typeof Function.prototype]`,
  'Math and numbers at the edges': `return [Math.round(-0.5), Object.is(Math.round(-0.4), -0), Math.max(), Number.MAX_SAFE_INTEGER + 2, 0.1 * 3, Math.hypot(3, 4), Number.isInteger(5.0), (25).toString(36), Math.sign(-3)]`,
  'tagged templates and String.raw': `const tag = (s, ...v) => s.raw.join('|') + v.join(','); return [tag\`a\${1}b\${2}\\n\`, String.raw\`\\d+\`, \`\${1 + 1}\`]`,
};

interface Difference {
  code: string;
  /** What plain Node answers. */
  node: unknown;
  /** What the sandbox answers instead (a result, or a failure matched on its message). */
  sandbox: unknown;
}

// What toolhost answers differently, on purpose (docs/sandbox.md, "Differences from Node").
const DIFFERENCES: Record<string, Difference> = {
  'reading an undeclared variable gives undefined (SES compartments), not a ReferenceError': {
    code: `try { return typeof notDeclaredAnywhere === 'undefined' ? String(notDeclaredAnywhere) : 'defined'; } catch (e) { return e.name; }`,
    node: 'ReferenceError',
    sandbox: 'undefined',
  },
  // V8 writes this message; when the error is not caught, the run's USER_ERROR adds the hint (tested below).
  'changing a built-in prototype by assignment throws': {
    code: `try { Array.prototype.last = function () { return this[this.length - 1]; }; return [1, 2].last(); } catch (e) { return e.name + ': ' + e.message; }`,
    node: 2,
    sandbox: 'TypeError: Cannot add property last, object is not extensible',
  },
  'a polyfill through Object.defineProperty names the built-in': {
    code: `try { Object.defineProperty(String.prototype, 'shout', { value() { return this.toUpperCase() + '!'; } }); return 'hi'.shout(); } catch (e) { return e.name + ': ' + e.message; }`,
    node: 'HI!',
    sandbox: expect.stringMatching(
      /^TypeError: Cannot define property shout on String\.prototype: built-ins are frozen in toolhost .*subclass/,
    ),
  },
  'an array or function cannot be given its own property named like a method of its prototype by assignment': {
    code: `const a = [1, 2]; try { a.map = () => 'mine'; return a.map(); } catch (e) { Object.defineProperty(a, 'map', { value: () => 'defined' }); return [e.name, a.map()]; }`,
    node: 'mine',
    sandbox: ['TypeError', 'defined'],
  },
  'resizable ArrayBuffers are refused (their memory is not counted against memoryMb)': {
    code: `try { const b = new ArrayBuffer(8, { maxByteLength: 16 }); b.resize(16); return b.byteLength; } catch (e) { return e.name + ': ' + e.message; }`,
    node: 16,
    sandbox: expect.stringMatching(
      /^TypeError: ArrayBuffer: resizable buffers \(maxByteLength\) are not available in toolhost/,
    ),
  },
  'structuredClone throws a DataCloneError that is an Error, not a DOMException': {
    code: `try { structuredClone(() => 1); } catch (e) { return [e.name, e.code, e instanceof Error, e.constructor.name]; }`,
    node: ['DataCloneError', 25, false, 'DOMException'],
    sandbox: ['DataCloneError', 25, true, 'DataCloneError'],
  },
  'structuredClone with a transfer list is refused': {
    code: `const b = new ArrayBuffer(4); try { structuredClone(b, { transfer: [b] }); return b.byteLength; } catch (e) { return e.name; }`,
    node: 0,
    sandbox: 'DataCloneError',
  },
  // SES's immutable-ArrayBuffer shim defines these, non-configurable, and on a V8 without them they only throw: Node 20's
  // (11.3) has no `transfer`, Node 22's (12.4) has it and the shim keeps the native one.
  'ArrayBuffer.prototype has SES additions: sliceToImmutable, and on Node 20 transfer (which throws there)': {
    code: `const p = ArrayBuffer.prototype; let transfer; try { transfer = new ArrayBuffer(1).transfer().byteLength; } catch (e) { transfer = e.name; }
return [typeof p.transfer, transfer, typeof p.sliceToImmutable, typeof p.resize]`,
    node:
      NODE_MAJOR >= 22 ? ['function', 1, 'undefined', 'function'] : ['undefined', 'TypeError', 'undefined', 'function'],
    sandbox:
      NODE_MAJOR >= 22 ? ['function', 1, 'function', 'function'] : ['function', 'TypeError', 'function', 'function'],
  },
  'shared memory and WebAssembly are absent': {
    code: `return [typeof SharedArrayBuffer, typeof Atomics, typeof WebAssembly]`,
    node: ['function', 'object', 'object'],
    sandbox: ['undefined', 'undefined', 'undefined'],
  },
};

// The constructor of async functions, to build one from a snippet's text as the sandbox does.
const AsyncFunction = Object.getPrototypeOf(inNode).constructor as new (...args: string[]) => () => Promise<unknown>;

async function inNode(code: string): Promise<unknown> {
  const value = await new AsyncFunction(code)();
  return JSON.parse(JSON.stringify(value)) as unknown;
}

describe('the realm is standard JavaScript', () => {
  const runtime = new SandboxRuntime({ entryMode: 'async' });
  afterAll(() => runtime.dispose());

  function inSandbox(code: string): Promise<RunOutcome> {
    return runtime.run(request(code, { tenantId: 'compat', limits: { timeoutMs: 5000 } as never }), recordingBridge());
  }

  it('has about 40 everyday snippets', () => {
    expect(Object.keys(SNIPPETS).length).toBeGreaterThanOrEqual(40);
  });

  it.each(Object.entries(SNIPPETS))('%s: same answer as Node', async (_name, code) => {
    const expected = await inNode(code);
    const outcome = await inSandbox(code);
    expect(outcome).toMatchObject({ status: 'succeeded' });
    expect(outcome.status === 'succeeded' && outcome.result).toEqual(expected);
  });

  it.each(Object.entries(DIFFERENCES))('documented difference: %s', async (_name, difference) => {
    expect(await inNode(difference.code)).toEqual(difference.node);
    const outcome = await inSandbox(difference.code);
    expect(outcome).toMatchObject({ status: 'succeeded', result: difference.sandbox });
  });

  it('a polyfill left uncaught ends USER_ERROR with the hint and its line', async () => {
    const outcome = await inSandbox(`const x = 1;\nObject.prototype.extend = function () {};\nreturn x`);
    expect(outcome).toMatchObject({
      status: 'failed',
      error: {
        code: 'USER_ERROR',
        message: expect.stringMatching(
          /^TypeError: Cannot add property extend.*built-ins are frozen in toolhost.*\(line 2/,
        ),
      },
    });
  });

  it('using a global toolhost leaves out says why', async () => {
    const outcome = await inSandbox(`return new SharedArrayBuffer(8)`);
    expect(outcome).toMatchObject({
      error: { message: expect.stringContaining('SharedArrayBuffer is not a constructor in toolhost: shared memory') },
    });
  });
});
