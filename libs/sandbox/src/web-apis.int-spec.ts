// The web APIs tool code is given (issue 19): each behaves as the Web standards say, checked against Node's own
// implementations where Node has them (the same snippet runs in Node and in the sandbox and must give the same
// answer), then timers and fetch through a fake bridge, on real isolated-vm in both entry modes.
import { createHash, createHmac, webcrypto } from 'node:crypto';
import { atob as nodeAtob, btoa as nodeBtoa } from 'node:buffer';
import { URL as NodeURL, URLSearchParams as NodeURLSearchParams } from 'node:url';
import { TextDecoder as NodeTextDecoder, TextEncoder as NodeTextEncoder } from 'node:util';
import { Headers as UndiciHeaders } from 'undici';
import { SandboxRuntime } from './sandbox-runtime';
import { expectFailed, expectSucceeded, recordingBridge, request, type RecordingBridge } from './sandbox-test.fixtures';
import { EgressError, type EgressRequest, type EgressResponse, type SandboxLimits } from './sandbox.types';

type Snippet = (...args: unknown[]) => Promise<unknown>;

/** Node's DOMException, as its own atob throws it. */
const NodeDOMException = ((): unknown => {
  try {
    nodeAtob('~');
  } catch (error) {
    return (error as object).constructor;
  }
  return undefined;
})();

const NODE_GLOBALS: Record<string, unknown> = {
  URL: NodeURL,
  URLSearchParams: NodeURLSearchParams,
  TextEncoder: NodeTextEncoder,
  TextDecoder: NodeTextDecoder,
  atob: nodeAtob,
  btoa: nodeBtoa,
  Headers: UndiciHeaders,
  AbortController,
  AbortSignal,
  DOMException: NodeDOMException,
  crypto: webcrypto,
};

async function inNode(code: string): Promise<unknown> {
  // The AsyncFunction constructor, reached from this very function.
  const AsyncFunction = Object.getPrototypeOf(inNode).constructor as new (...args: string[]) => Snippet;
  const names = Object.keys(NODE_GLOBALS);
  const value = await new AsyncFunction(...names, code)(...Object.values(NODE_GLOBALS));
  return JSON.parse(JSON.stringify(value)) as unknown;
}

const HEX = `const hex = (buffer) => [...new Uint8Array(buffer)].map((b) => b.toString(16).padStart(2, '0')).join('');\n`;

const URL_CASES: [string, string?][] = [
  ['https://example.com'],
  ['HTTPS://EXAMPLE.COM:443/a/./b/../c?x=1#y'],
  ['http://user:pa ss@host:8080/p'],
  ['http://a@b@c/'],
  ['http://@host/'],
  ['http://[::1]:3000/'],
  ['http://[2001:db8::1]/'],
  ['http://[::ffff:127.0.0.1]/'],
  ['http://[1:0:0:2::3:0]/'],
  ['http://[0:0:0:0:0:0:0:1]/'],
  ['http://[::]/'],
  ['http://[::1'],
  ['http://[:::1]/'],
  ['http://0x7f000001/'],
  ['http://0177.0.0.1/'],
  ['http://127.1/'],
  ['http://2130706433/'],
  ['http://256.256.256.256/'],
  ['http://1.2.3.4.5/'],
  ['http://example.com./'],
  ['http://ex%41mple.com/'],
  ['http://exa mple.com/'],
  ['http://münchen.de/'],
  ['http://xn--mnchen-3ya.de/'],
  ['https://a/b c?d e#f g'],
  ["https://a/?q='x'"],
  ["non-special://h/?q='x'"],
  ['non-special://h/a b'],
  ['sc://ñ/'],
  ['mailto:someone@example.com'],
  ['data:text/plain,hi there'],
  ['javascript:alert(1)'],
  ['file:///C:/x/../y'],
  ['file://localhost/etc/passwd'],
  ['file:///etc/../passwd'],
  ['/relative', 'https://a/b/c'],
  ['../x', 'https://a/b/c/d'],
  ['?q', 'https://a/b?old#h'],
  ['#f', 'https://a/b?q'],
  ['//other/path', 'https://a/'],
  ['http:\\\\host\\path'],
  ['  https://trim.me/  '],
  ['https://a/\tb\nc'],
  ['http://a:99999/'],
  ['http://a:0080/'],
  ['https://a:443/'],
  ['ws://a:80/'],
  ['relative'],
  ['https://example.com/%zz'],
  ['https://example.com/é?é#é'],
  ['http://a/..%2e/b/%2E/c'],
  ['https://EXAMPLE.com/PATH'],
  ['blob:https://a.com/uuid'],
  ['https://a/😀?😀#😀'],
  ['http://a/\uD800'],
  // The fast path's cases, and the ones it hands to the parser.
  ['https://api.example.com:8443/v1/a/?x=1&y=%20&z=a/b?c#frag/x?y'],
  ['https://api.example.com:443'],
  ['wss://a.example:0443/'],
  ['https://a-b.example.com./x;y=1'],
  ['https://api.example.com/a/./b/../c'],
  ['https://api.example.com/a/%2e/b/%2E%2e/c/.'],
  ['https://api.example.com/..'],
  ["https://api.example.com/a?q=it's"],
  ["https://api.example.com/a#it's"],
  ['https://1.2.3.4/x'],
  ['https://a.0x10/x'],
  ['https://a.example:65536/'],
  ['https://a..b/'],
  ['https://a/b?'],
  ['https://a/b#'],
  ['https://a?'],
];

const SNIPPETS: Record<string, string> = {
  'URL parsing (a table of inputs, with and without a base)': `const cases = ${JSON.stringify(URL_CASES)};
return cases.map(([input, base]) => {
  try {
    const u = base === undefined ? new URL(input) : new URL(input, base);
    return [u.href, u.origin, u.protocol, u.username, u.password, u.host, u.hostname, u.port, u.pathname, u.search, u.hash];
  } catch (e) {
    return e.name;
  }
});`,
  'URL.canParse and toJSON': `return [URL.canParse('https://a'), URL.canParse('nope'), URL.canParse('/x', 'https://a'), JSON.stringify({ u: new URL('https://a/b') }), String(new URL('https://a'))]`,
  'URL setters': `const u = new URL('https://user:pw@example.com:8080/a/b?x=1#frag');
const out = [];
u.protocol = 'http'; out.push(u.href);
u.protocol = 'mailto'; out.push(u.href);
u.username = 'us er'; u.password = 'p@ss'; out.push(u.href);
u.host = 'other.org:81'; out.push(u.href);
u.hostname = 'third.net'; out.push(u.href);
u.port = '80'; out.push(u.href);
u.port = '4000'; out.push(u.href);
u.pathname = '/c d/../e'; out.push(u.href);
u.search = '?q=a b'; out.push(u.href);
u.hash = 'x y'; out.push(u.href);
u.search = ''; u.hash = ''; out.push(u.href);
u.href = 'https://fresh.example/'; out.push(u.href);
try { u.href = 'not a url'; } catch (e) { out.push(e.name); }
return out;`,
  'searchParams is live, both ways': `const u = new URL('https://a/p?x=1&y=2');
const p = u.searchParams;
p.append('z', 'a b&c');
const one = u.href;
p.delete('x');
const two = u.search;
u.search = '?k=v&k=w';
const three = [p.get('k'), p.getAll('k'), p.size];
p.set('k', 'only');
const four = u.href;
p.delete('k');
const five = [u.href, u.search];
u.href = 'https://b/?n=1';
return [one, two, three, four, five, p.get('n'), p === u.searchParams]`,
  'URLSearchParams: constructors, encoding, sort and iteration': `const a = new URLSearchParams('?a=1&b=2+3&c=%20%41&d&=e&a=4');
const b = new URLSearchParams([['x', '1'], ['y', 'é😀'], ['x', '2']]);
const c = new URLSearchParams({ q: 'a+b c', n: 5, u: undefined });
const d = new URLSearchParams(a);
d.sort();
const seen = [];
b.forEach((value, key) => seen.push(key + '=' + value));
return [[...a], a.get('a'), a.getAll('a'), a.has('d'), a.has('a', '4'), a.has('a', '5'), String(b), String(c), String(d), [...d.keys()], [...d.values()], seen, a.size, String(new URLSearchParams('x=%zz&y=%C3')), new URLSearchParams('~!*()\\'').toString()]`,
  'TextEncoder and TextDecoder round trips, surrogates included': `const enc = new TextEncoder();
const dec = new TextDecoder();
const texts = ['', 'ascii', 'é', '€', '😀', 'a\\u0000b', '\\uD800', 'x\\uDC00y', '\\uD83D\\uDE00\\uD83D', 'ß'.repeat(1000)];
return [enc.encoding, dec.encoding, dec.fatal, dec.ignoreBOM, ...texts.map((t) => { const bytes = enc.encode(t); return [Array.from(bytes.slice(0, 12)), bytes.length, dec.decode(bytes) === t.toWellFormed()]; })]`,
  'TextEncoder.encodeInto': `const enc = new TextEncoder();
const small = new Uint8Array(5);
const big = new Uint8Array(16);
return [enc.encodeInto('a€😀', small), Array.from(small), enc.encodeInto('a€😀', big), Array.from(big.slice(0, 8))]`,
  'TextDecoder: invalid bytes, fatal, BOM and streaming': `const d = new TextDecoder();
const bytes = (a) => new Uint8Array(a);
const cases = [[0xc3], [0xe2, 0x82], [0xff, 0x41], [0xed, 0xa0, 0x80], [0xf0, 0x9f, 0x98], [0xc0, 0xaf], [0xf4, 0x90, 0x80, 0x80], [0xef, 0xbb, 0xbf, 0x41], [0xe0, 0x80, 0x41]];
const plain = cases.map((c) => d.decode(bytes(c)));
const fatal = cases.map((c) => { try { return new TextDecoder('utf-8', { fatal: true }).decode(bytes(c)); } catch (e) { return e.name; } });
const keepBom = new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes([0xef, 0xbb, 0xbf, 0x41]));
const s = new TextDecoder();
const streamed = [s.decode(bytes([0xf0, 0x9f]), { stream: true }), s.decode(bytes([0x98, 0x80, 0xe2]), { stream: true }), s.decode(bytes([0x82, 0xac]), { stream: true }), s.decode()];
const views = [d.decode(new Uint16Array([0x4241]).buffer), d.decode(new DataView(bytes([0x43, 0x44]).buffer)), d.decode()];
const other = [new TextDecoder('latin1').encoding, new TextDecoder('latin1').decode(bytes([0x41, 0xe9])), new TextDecoder('utf-16le').decode(bytes([0x3d, 0xd8, 0x00, 0xde])), new TextDecoder(' UTF8 ').encoding];
let unknown;
try { new TextDecoder('no-such-encoding'); } catch (e) { unknown = e.name; }
return [plain, fatal, keepBom, streamed, views, other, unknown]`,
  'atob and btoa, errors included': `const tryIt = (f) => { try { return f(); } catch (e) { return [e.name, e.code, e instanceof DOMException]; } };
return [
  btoa(''), btoa('f'), btoa('fo'), btoa('foo'), btoa('foob'), btoa('\\u00ff\\u00fe\\u0000'), tryIt(() => btoa('€')),
  atob('Zm9vYg=='), atob('Zm9vYg'), atob(' Zm9v\\nYmFy '), atob(''), tryIt(() => atob('Zm9vY')), tryIt(() => atob('Zm9v*')),
  tryIt(() => atob('Zg=a')), tryIt(() => atob('Z===')), atob(btoa('\\u0080\\u00ff')) === '\\u0080\\u00ff', atob(null), btoa(12),
]`,
  'crypto.subtle.digest': `${HEX}const data = new TextEncoder().encode('The quick brown fox jumps over the lazy dog');
const out = [];
for (const alg of ['SHA-1', 'SHA-256', 'SHA-384', 'SHA-512', { name: 'sha-256' }]) out.push(hex(await crypto.subtle.digest(alg, data)));
out.push(hex(await crypto.subtle.digest('SHA-256', new ArrayBuffer(0))));
out.push(hex(await crypto.subtle.digest('SHA-256', new Uint32Array([1, 2]))));
try { await crypto.subtle.digest('MD5', data); } catch (e) { out.push(e.name); }
return out;`,
  'crypto.subtle HMAC importKey, sign and verify': `${HEX}const enc = new TextEncoder();
const out = [];
for (const hash of ['SHA-1', 'SHA-256', 'SHA-384', 'SHA-512']) {
  const key = await crypto.subtle.importKey('raw', enc.encode('secret-key'), { name: 'HMAC', hash }, false, ['sign', 'verify']);
  const signature = await crypto.subtle.sign('HMAC', key, enc.encode('payload'));
  out.push([hex(signature), await crypto.subtle.verify('HMAC', key, signature, enc.encode('payload')), await crypto.subtle.verify({ name: 'HMAC' }, key, signature, enc.encode('other')), key.type, key.algorithm.name, key.algorithm.hash.name, key.algorithm.length, key.usages, key.extractable]);
}
const signOnly = await crypto.subtle.importKey('raw', enc.encode('k'), { name: 'HMAC', hash: { name: 'SHA-256' } }, true, ['sign']);
try { await crypto.subtle.verify('HMAC', signOnly, new Uint8Array(32), enc.encode('x')); } catch (e) { out.push(e.name); }
out.push(hex(await crypto.subtle.exportKey('raw', signOnly)));
return out;`,
  'Headers: case, combining, set-cookie, iteration and validation': `const h = new Headers({ 'Content-Type': 'text/plain', 'X-B': ' padded \\t' });
h.append('x-a', '1');
h.append('X-A', '2');
h.append('Set-Cookie', 'a=1');
h.append('set-cookie', 'b=2');
const out = [h.get('content-type'), h.get('CONTENT-TYPE'), h.get('x-a'), h.get('x-b'), h.has('X-A'), h.get('missing'), h.getSetCookie(), h.get('set-cookie'), [...h], [...h.keys()], [...h.values()]];
h.set('x-a', '3');
h.delete('Content-Type');
const each = [];
h.forEach((value, name) => each.push(name + ':' + value));
out.push([...h.entries()], each);
const pairs = new Headers([['a', '1'], ['A', '2']]);
out.push([...pairs], [...new Headers(pairs)]);
for (const bad of [() => h.append('bad name', 'x'), () => h.set('x', 'a\\nb'), () => new Headers([['a']]), () => h.get('é')]) {
  try { bad(); out.push('accepted'); } catch (e) { out.push(e.name); }
}
return out;`,
  'AbortController and AbortSignal': `const c = new AbortController();
const events = [];
c.signal.addEventListener('abort', (e) => events.push(e.type));
c.signal.onabort = () => events.push('onabort');
const before = c.signal.aborted;
c.abort();
c.abort('again');
const pre = AbortSignal.abort('why');
const any = AbortSignal.any([new AbortController().signal, pre]);
let thrown;
try { c.signal.throwIfAborted(); } catch (e) { thrown = [e.name, e.message, e.code]; }
let illegal;
try { new AbortSignal(); } catch (e) { illegal = e.name; }
return [before, c.signal.aborted, c.signal.reason.name, events, pre.reason, any.aborted, any.reason, thrown, illegal, Object.prototype.toString.call(c.signal)]`,
  DOMException: `const e = new DOMException('m', 'AbortError');
return [e.name, e.message, e.code, e instanceof DOMException, new DOMException().name, new DOMException('x', 'NoSuch').code, String(e)]`,
};

describe('web APIs: the same answers as Node', () => {
  const runtime = new SandboxRuntime({ entryMode: 'async' });
  afterAll(() => runtime.dispose());

  it.each(Object.entries(SNIPPETS))('%s', async (_name, code) => {
    const outcome = await runtime.run(
      request(code, { limits: { timeoutMs: 10_000 } as SandboxLimits }),
      recordingBridge(),
    );
    expect(expectSucceeded(outcome).result).toEqual(await inNode(code));
  });
});

describe.each(['async', 'sync', 'adaptive'] as const)('web APIs, entry mode %s', (entryMode) => {
  const runtime = new SandboxRuntime({ entryMode });
  afterAll(() => runtime.dispose());

  const run = (code: string, bridge: RecordingBridge = recordingBridge(), limits: Partial<SandboxLimits> = {}) =>
    runtime.run(request(code, { limits: limits as SandboxLimits }), bridge);
  const value = async (code: string, bridge?: RecordingBridge): Promise<unknown> =>
    expectSucceeded(await run(code, bridge)).result;

  describe('crypto, against node:crypto', () => {
    it('digests and HMACs match node:crypto', async () => {
      const data = 'héllo wörld '.repeat(1000);
      const result = await value(`${HEX}const bytes = new TextEncoder().encode(${JSON.stringify(data)});
const key = await crypto.subtle.importKey('raw', new TextEncoder().encode('k3y'), { name: 'HMAC', hash: 'SHA-512' }, false, ['sign']);
return [hex(await crypto.subtle.digest('SHA-256', bytes)), hex(await crypto.subtle.digest('SHA-1', bytes)), hex(await crypto.subtle.sign('HMAC', key, bytes))]`);
      expect(result).toEqual([
        createHash('sha256').update(data).digest('hex'),
        createHash('sha1').update(data).digest('hex'),
        createHmac('sha512', 'k3y').update(data).digest('hex'),
      ]);
    });

    it('randomUUID and getRandomValues: version 4, distinct, bounded, integer arrays only', async () => {
      const result = (await value(`const ids = Array.from({ length: 50 }, () => crypto.randomUUID());
const a = crypto.getRandomValues(new Uint8Array(32));
const b = crypto.getRandomValues(new Uint32Array(8));
const errors = [];
for (const bad of [() => crypto.getRandomValues(new Uint8Array(65537)), () => crypto.getRandomValues(new Float64Array(2)), () => crypto.getRandomValues([1, 2])]) {
  try { bad(); errors.push('accepted'); } catch (e) { errors.push([e.name, e.code]); }
}
return [ids, new Set(ids).size, Array.from(a), Array.from(b), crypto.getRandomValues(new BigUint64Array(2)).length, crypto.getRandomValues(new Uint8Array(65536)).length, errors]`)) as [
        string[],
        number,
        number[],
        number[],
        number,
        number,
        unknown[],
      ];
      const [ids, distinct, a, b, big, max, errors] = result;
      for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(distinct).toBe(50);
      expect(new Set(a).size).toBeGreaterThan(8);
      expect(b.some((n) => n > 0xffff)).toBe(true);
      expect([big, max]).toEqual([2, 65536]);
      expect(errors).toEqual([
        ['QuotaExceededError', 22],
        ['TypeMismatchError', 17],
        ['TypeMismatchError', 17],
      ]);
    });
  });

  it('TextDecoder windows-1252 maps 0x80–0x9f as the Encoding Standard says (Node 20 decodes them as latin1)', async () => {
    expect(await value("return new TextDecoder('latin1').decode(new Uint8Array([0x80, 0x9f, 0x81, 0xe9]))")).toBe(
      '\u20ac\u0178\u0081\u00e9',
    );
  });

  describe('Date, Math.random and structuredClone', () => {
    it('work', async () => {
      const before = Date.now();
      const [now, date, random, clone] = (await value(
        'return [Date.now(), new Date().getTime(), Math.random(), structuredClone({ a: [1, new Date(0)] }).a.length]',
      )) as [number, number, number, number];
      expect(now).toBeGreaterThanOrEqual(before);
      expect(date).toBeGreaterThanOrEqual(now);
      expect(random).toBeGreaterThanOrEqual(0);
      expect(random).toBeLessThan(1);
      expect(clone).toBe(2);
    });
  });

  describe('timers', () => {
    it('fire in order of their time, then of their creation', async () => {
      expect(
        await value(`const order = [];
await new Promise((resolve) => {
  setTimeout(() => order.push('150'), 150);
  setTimeout(() => order.push('0a'), 0);
  setTimeout(() => order.push('60'), 60);
  setTimeout(() => order.push('0b'));
  setTimeout((a, b) => { order.push(a + b); resolve(); }, 250, 'x', 'y');
});
return order;`),
      ).toEqual(['0a', '0b', '60', '150', 'xy']);
    });

    it('clearTimeout and clearInterval stop them; an interval repeats', async () => {
      expect(
        await value(`const seen = [];
const cancelled = setTimeout(() => seen.push('cancelled'), 5);
clearTimeout(cancelled);
clearTimeout(12345);
clearTimeout(undefined);
let n = 0;
await new Promise((resolve) => {
  const id = setInterval(() => { n++; if (n === 3) { clearInterval(id); setTimeout(resolve, 30); } }, 5);
});
return [seen, n, typeof cancelled];`),
      ).toEqual([[], 3, 'number']);
    });

    it('a timer keeps the run open until it fires; AbortSignal.timeout aborts', async () => {
      expect(
        await value(`const s = AbortSignal.timeout(10);
await new Promise((resolve) => setTimeout(resolve, 50));
return [s.aborted, s.reason.name, s.reason instanceof DOMException];`),
      ).toEqual([true, 'TimeoutError', true]);
    });

    it('with nothing pending, an await on nothing still ends TIMEOUT at once (AbortSignal.timeout keeps nothing open)', async () => {
      const outcome = await run('AbortSignal.timeout(60_000); await new Promise(() => {})', recordingBridge(), {
        wallClockMs: 60_000,
      });
      expect(expectFailed(outcome, 'TIMEOUT').error.message).toContain('nothing can settle');
    });

    it('a timer past the wall clock ends the run TIMEOUT on the wall clock', async () => {
      const outcome = await run('await new Promise((r) => setTimeout(r, 60_000)); return 1', recordingBridge(), {
        wallClockMs: 300,
      });
      expect(expectFailed(outcome, 'TIMEOUT').error.message).toBe('the invocation ran past its 300 ms wall clock');
    });

    it('a throw in a timer callback ends the run USER_ERROR', async () => {
      const outcome = await run("setTimeout(() => { throw new RangeError('late') }, 5); await new Promise(() => {})");
      expect(expectFailed(outcome, 'USER_ERROR').error.message).toContain('RangeError: late');
    });

    it('refuses a string callback', async () => {
      expect(await value("try { setTimeout('1 + 1', 0) } catch (e) { return e.name }")).toBe('TypeError');
    });

    it('are cleared when the run ends: the next run sees none of them fire', async () => {
      const bridge = recordingBridge();
      expectSucceeded(
        await run("setTimeout(() => ctx.audit('late'), 20); setInterval(() => ctx.audit('tick'), 5); return 1", bridge),
      );
      const next = await run("await new Promise((r) => setTimeout(r, 100)); return 'next'", bridge);
      expect(expectSucceeded(next).result).toBe('next');
      expect(bridge.audits).toEqual([]);
    });
  });

  describe('fetch', () => {
    interface FetchBridge extends RecordingBridge {
      requests: EgressRequest[];
      signals: AbortSignal[];
    }
    const answer = (body: string | Uint8Array, init: Partial<EgressResponse> = {}): EgressResponse => ({
      url: 'https://api.example.com/final',
      status: 200,
      statusText: 'OK',
      headers: [['content-type', 'application/json']],
      redirected: false,
      body: typeof body === 'string' ? new Uint8Array(Buffer.from(body)) : body,
      ...init,
    });
    function fetchBridge(
      respond: (request: EgressRequest, signal: AbortSignal) => Promise<EgressResponse> = () =>
        Promise.resolve(answer('{"ok":true}')),
    ): FetchBridge {
      const bridge = recordingBridge() as FetchBridge;
      bridge.requests = [];
      bridge.signals = [];
      bridge.fetch = (req, signal) => {
        bridge.requests.push(req);
        bridge.signals.push(signal);
        return respond(req, signal);
      };
      return bridge;
    }
    const hanging = (_request: EgressRequest, signal: AbortSignal): Promise<EgressResponse> =>
      new Promise((_resolve, reject) => {
        signal.addEventListener('abort', () => {
          reject(signal.reason as Error);
        });
      });
    const text = (bytes: Uint8Array | undefined): string | undefined =>
      bytes === undefined ? undefined : Buffer.from(bytes).toString();

    it('sends the request as the host expects it and answers a Response', async () => {
      const bridge = fetchBridge(() =>
        Promise.resolve(
          answer('{"a":[1,"é"]}', {
            status: 201,
            statusText: 'Created',
            headers: [
              ['Content-Type', 'application/json'],
              ['set-cookie', 'a=1'],
              ['set-cookie', 'b=2'],
            ],
            redirected: true,
          }),
        ),
      );
      const result = await value(
        `const r = await fetch('HTTPS://API.example.com/v1/items?q=a b', { headers: { Authorization: 'Bearer k', 'X-Two': 'y' } });
return [r.ok, r.status, r.statusText, r.url, r.redirected, r.headers.get('content-type'), r.headers.getSetCookie(), r.bodyUsed, await r.json(), r.bodyUsed, r instanceof Response, r.type];`,
        bridge,
      );
      expect(result).toEqual([
        true,
        201,
        'Created',
        'https://api.example.com/final',
        true,
        'application/json',
        ['a=1', 'b=2'],
        false,
        { a: [1, 'é'] },
        true,
        true,
        'basic',
      ]);
      expect(bridge.requests).toHaveLength(1);
      const [sent] = bridge.requests;
      expect(sent).toMatchObject({
        url: 'https://api.example.com/v1/items?q=a%20b',
        method: 'GET',
        headers: [
          ['authorization', 'Bearer k'],
          ['x-two', 'y'],
        ],
      });
      expect(sent?.body).toBeUndefined();
      expect(sent?.timeoutMs).toBeLessThanOrEqual(10_000);
    });

    it('encodes every kind of body', async () => {
      const bridge = fetchBridge();
      await value(
        `const post = (body, headers) => fetch('https://api.example.com/', { method: 'post', body, headers });
await post('héllo');
await post(new URLSearchParams({ a: '1 2', b: 'é' }));
await post(new Uint8Array([0, 255, 128]));
await post(new Uint16Array([0x4241]).buffer);
await post(JSON.stringify({ x: 1 }), { 'content-type': 'application/json' });
await fetch(new Request('https://api.example.com/r', { method: 'PUT', body: 'from a Request' }));
await fetch('https://api.example.com/', { method: 'patch', body: new DataView(new Uint8Array([7]).buffer) });
return 1;`,
        bridge,
      );
      const sent = bridge.requests.map((r) => [r.method, r.headers, text(r.body)]);
      expect(sent).toEqual([
        ['POST', [['content-type', 'text/plain;charset=UTF-8']], 'héllo'],
        ['POST', [['content-type', 'application/x-www-form-urlencoded;charset=UTF-8']], 'a=1+2&b=%C3%A9'],
        ['POST', [], Buffer.from([0, 255, 128]).toString()],
        ['POST', [], 'AB'],
        ['POST', [['content-type', 'application/json']], '{"x":1}'],
        ['PUT', [['content-type', 'text/plain;charset=UTF-8']], 'from a Request'],
        ['PATCH', [], '\u0007'],
      ]);
      expect(Array.from(bridge.requests[2]?.body ?? [])).toEqual([0, 255, 128]);
    });

    it('refuses what the standard refuses, before the host is asked', async () => {
      const bridge = fetchBridge();
      const result = await value(
        `const out = [];
for (const args of [['relative/path'], ['https://a/', { method: 'GET', body: 'x' }], ['https://a/', { method: 'CONNECT' }], ['https://a/', { headers: { 'bad name': 'x' } }], ['https://a/', { redirect: 'nope' }], ['https://a/', { signal: {} }]]) {
  try { await fetch(...args); out.push('sent'); } catch (e) { out.push(e.name); }
}
return out;`,
        bridge,
      );
      expect(result).toEqual(Array(6).fill('TypeError'));
      expect(bridge.requests).toEqual([]);
    });

    it('passes redirect "manual" and "error" to the host, and leaves "follow" (the default) unsaid', async () => {
      const bridge = fetchBridge();
      await value(
        `await fetch('https://a/1');
await fetch('https://a/2', { redirect: 'follow' });
await fetch('https://a/3', { redirect: 'manual' });
await fetch(new Request('https://a/4', { redirect: 'error' }));
return new Request('https://a/', { redirect: 'manual' }).redirect;`,
        bridge,
      );
      expect(bridge.requests.map((r) => r.redirect)).toEqual([undefined, undefined, 'manual', 'error']);
    });

    it('answers bytes exactly, text as UTF-8, and a body once', async () => {
      const all = new Uint8Array(256).map((_v, i) => i);
      const bridge = fetchBridge((req) =>
        Promise.resolve(req.url.endsWith('/bin') ? answer(all) : answer('\uFEFFzß水🀄 ok')),
      );
      const result = await value(
        `const bin = await fetch('https://api.example.com/bin');
const bytes = new Uint8Array(await bin.arrayBuffer());
const t = await fetch('https://api.example.com/text');
const copy = t.clone();
const body = await t.text();
let again;
try { await t.text(); } catch (e) { again = e.name; }
return [bytes.length, bytes.every((b, i) => b === i), body, again, await copy.text()];`,
        bridge,
      );
      expect(result).toEqual([256, true, 'zß水🀄 ok', 'TypeError', 'zß水🀄 ok']);
    });

    it("a fetched Response's headers are immutable; Response and Request can be made by the code", async () => {
      const bridge = fetchBridge();
      const result = await value(
        `const r = await fetch('https://api.example.com/');
const tries = [() => r.headers.set('x', '1'), () => r.headers.append('x', '1'), () => r.headers.delete('content-type')];
const errors = tries.map((t) => { try { t(); return 'changed'; } catch (e) { return e.name; } });
const made = new Response('hé', { status: 201, headers: { 'X-A': '1' } });
const json = Response.json({ a: 1 }, { status: 202 });
const req = new Request('https://a.example/p', { method: 'POST', body: 'x', headers: { 'X-B': '2' } });
const copy = req.clone();
let badStatus;
try { new Response('', { status: 99 }); } catch (e) { badStatus = e.name; }
return [errors, made.status, made.ok, made.headers.get('content-type'), made.headers.get('x-a'), await made.text(), json.status, json.headers.get('content-type'), await json.json(), req.method, req.url, req.headers.get('x-b'), await copy.text(), await req.text(), badStatus, Response.error().type];`,
        bridge,
      );
      expect(result).toEqual([
        ['TypeError', 'TypeError', 'TypeError'],
        201,
        true,
        'text/plain;charset=UTF-8',
        '1',
        'hé',
        202,
        'application/json',
        { a: 1 },
        'POST',
        'https://a.example/p',
        '2',
        'x',
        'x',
        'RangeError',
        'error',
      ]);
    });

    it('a refused request is a TypeError with the EgressError code, catchable by it', async () => {
      const bridge = fetchBridge((req) => {
        if (req.url.includes('denied')) {
          return Promise.reject(new EgressError('NETWORK_DENIED', 'denied.example is not on the allow list'));
        }
        if (req.url.includes('big')) return Promise.reject(new EgressError('NETWORK_TOO_LARGE', 'over 5 MiB'));
        return Promise.reject(new Error('socket hang up'));
      });
      const result = await value(
        `const out = [];
for (const host of ['denied', 'big', 'other']) {
  try { await fetch('https://' + host + '.example/'); } catch (e) { out.push([e instanceof TypeError, e.name, e.code, e.message]); }
}
return out;`,
        bridge,
      );
      expect(result).toEqual([
        [true, 'TypeError', 'NETWORK_DENIED', 'fetch failed: NETWORK_DENIED: denied.example is not on the allow list'],
        [true, 'TypeError', 'NETWORK_TOO_LARGE', 'fetch failed: NETWORK_TOO_LARGE: over 5 MiB'],
        [true, 'TypeError', 'NETWORK_ERROR', 'fetch failed: NETWORK_ERROR: socket hang up'],
      ]);
    });

    it('a bridge without fetch denies every request', async () => {
      expect(await value("try { await fetch('https://a.example/') } catch (e) { return [e.code, e.message] }")).toEqual(
        ['NETWORK_DENIED', 'fetch failed: NETWORK_DENIED: this tool has no network access'],
      );
    });

    it("the code's AbortController aborts the host request and rejects with an AbortError", async () => {
      const bridge = fetchBridge(hanging);
      const result = await value(
        `const c = new AbortController();
const pending = fetch('https://slow.example/', { signal: c.signal });
setTimeout(() => c.abort(), 10);
let aborted;
try { await pending; } catch (e) { aborted = [e.name, e.code]; }
let pre;
try { await fetch('https://slow.example/', { signal: AbortSignal.abort() }); } catch (e) { pre = e.name; }
const t = AbortSignal.timeout(20);
let timedOut;
try { await fetch('https://slow.example/', { signal: t }); } catch (e) { timedOut = e.name; }
return [aborted, pre, timedOut];`,
        bridge,
      );
      expect(result).toEqual([['AbortError', 20], 'AbortError', 'TimeoutError']);
      expect(bridge.requests).toHaveLength(2);
      expect(bridge.requests[1]?.timeoutMs).toBe(20);
      expect(bridge.signals.map((s) => s.aborted)).toEqual([true, true]);
    });

    it('a fetch still open when the tool returns is aborted, and the run ends normally', async () => {
      const bridge = fetchBridge(hanging);
      const outcome = await run(
        "fetch('https://slow.example/').catch(() => {}); await new Promise((r) => setTimeout(r, 20)); return 'done'",
        bridge,
      );
      expect(expectSucceeded(outcome).result).toBe('done');
      expect(bridge.signals).toHaveLength(1);
      expect(bridge.signals[0]?.aborted).toBe(true);
      expect((bridge.signals[0]?.reason as EgressError).code).toBe('NETWORK_ABORTED');
    });

    it('a fetch still open on the wall clock is aborted with the run', async () => {
      const bridge = fetchBridge(hanging);
      const outcome = await run("await fetch('https://slow.example/')", bridge, { wallClockMs: 300 });
      expectFailed(outcome, 'TIMEOUT');
      expect(bridge.signals[0]?.aborted).toBe(true);
      expect(bridge.requests[0]?.timeoutMs).toBeLessThanOrEqual(300);
    });

    it('1,000 parallel fetches are bounded by what the bridge says', async () => {
      let inFlight = 0;
      let most = 0;
      const bridge = fetchBridge(async () => {
        if (inFlight >= 10) throw new EgressError('NETWORK_LIMIT', 'at most 10 requests at once');
        inFlight += 1;
        most = Math.max(most, inFlight);
        await new Promise((resolve) => setImmediate(resolve));
        inFlight -= 1;
        return answer('1');
      });
      const outcome = await run(
        `const settled = await Promise.allSettled(Array.from({ length: 1000 }, (_, i) => fetch('https://api.example.com/' + i).then((r) => r.json())));
const codes = {};
for (const s of settled) { const key = s.status === 'fulfilled' ? 'ok' : s.reason.code; codes[key] = (codes[key] ?? 0) + 1; }
return codes;`,
        bridge,
        { timeoutMs: 10_000 },
      );
      const codes = expectSucceeded(outcome).result as Record<string, number>;
      expect((codes.ok ?? 0) + (codes.NETWORK_LIMIT ?? 0)).toBe(1000);
      expect(codes.ok).toBeGreaterThanOrEqual(10);
      expect(most).toBeLessThanOrEqual(10);
      expect(bridge.requests).toHaveLength(1000);
    });

    it('the TradingGoose body shape calls an API with its secret', async () => {
      const bridge = fetchBridge();
      const outcome = await runtime.run(
        request(
          "const r = await fetch('https://api.example.com/quote', { headers: { Authorization: 'Bearer {{API_KEY}}' } });\nreturn await r.json();",
          { secrets: { API_KEY: 'k-123' } },
        ),
        bridge,
      );
      expect(expectSucceeded(outcome).result).toEqual({ ok: true });
      expect(bridge.requests[0]?.headers).toEqual([['authorization', 'Bearer k-123']]);
    });

    it("the pi shape's signal is an AbortSignal of the run, and fetch takes it", async () => {
      const bridge = fetchBridge();
      const code = `export default function (pi) {
  pi.registerTool({ name: 't', async execute(id, params, signal) {
    const r = await fetch('https://api.example.com/', { signal });
    return { content: [], details: [signal instanceof AbortSignal, signal.aborted, await r.json()] };
  } });
}`;
      const outcome = await runtime.run(request(code), bridge);
      expect(expectSucceeded(outcome).result).toEqual([true, false, { ok: true }]);
    });
  });

  describe('hardened', () => {
    it('the web globals cannot be changed, and a change tried in one run is not seen by the next', async () => {
      const tries = await value(`const tries = [
  () => { URL.prototype.toString = () => 'pwned'; },
  () => { URLSearchParams.prototype.get = () => 'pwned'; },
  () => { Headers.prototype.get = () => 'pwned'; },
  () => { crypto.subtle.digest = () => 'pwned'; },
  () => { crypto.getRandomValues = () => 'pwned'; },
  () => { Object.defineProperty(TextEncoder.prototype, 'encode', { value: () => 'pwned' }); },
  () => { Object.setPrototypeOf(AbortSignal.prototype, null); },
  () => { Object.getPrototypeOf(AbortSignal.prototype).addEventListener = null; },
  () => { Response.prototype.json = null; },
  () => { fetch.leak = 1; },
  () => { setTimeout.leak = 1; },
  () => { atob.leak = 1; },
  () => { DOMException.prototype.leak = 1; },
];
return tries.map((t) => { try { t(); return 'changed'; } catch (e) { return e.name; } });`);
      expect(tries).toEqual(Array(13).fill('TypeError'));
      expect(
        await value(
          "return [new URL('http://a/b').toString(), new Headers({ a: '1' }).get('a'), typeof crypto.subtle.digest, typeof fetch.leak]",
        ),
      ).toEqual(['http://a/b', '1', 'function', 'undefined']);
    });
  });
});
