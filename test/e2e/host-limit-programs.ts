/**
 * Programs that spend their time, or grow their process, inside one V8 built-in, where isolated-vm's own timeout
 * and memory limit do not reach (issue 17, classes 1 and 2). Shared by host-limits.e2e-spec.ts and
 * bench/host-limits.bench.ts.
 */
export interface HostLimitProgram {
  name: string;
  code: string;
}

/** Each runs far past a 1 s timeout inside one call (array-likes skip the prelude's `fill` check). */
export const TIME_PROGRAMS: HostLimitProgram[] = [
  { name: 'fill on a huge array-like', code: 'Array.prototype.fill.call({ length: 2 ** 31 }, 1); return 1;' },
  {
    name: 'copyWithin on a huge array-like',
    code: 'Array.prototype.copyWithin.call({ length: 2 ** 31, 0: 1 }, 1, 0); return 1;',
  },
  { name: 'Array.from a huge length', code: 'return Array.from({ length: 1e9 }).length;' },
  { name: 'sort of a huge array-like', code: 'Array.prototype.sort.call({ length: 2 ** 31, 0: 2, 1: 1 }); return 1;' },
];

/**
 * The timeout of the memory programs: the server's cap (the wall clock) less a second, so that a loaded machine,
 * on which they grow more slowly, still sees them reach the memory limit first.
 */
export const MEMORY_PROGRAM_TIMEOUT_MS = 29_000;

/** Each grows the process by hundreds of MB a second (several GB unchecked) within MEMORY_PROGRAM_TIMEOUT_MS. */
export const MEMORY_PROGRAMS: HostLimitProgram[] = [
  { name: 'fill on a huge array-like', code: 'Array.prototype.fill.call({ length: 2 ** 31 }, 1); return 1;' },
  { name: 'Array.from a huge length', code: 'return Array.from({ length: 1e9 }).length;' },
  {
    name: 'a resizable ArrayBuffer grown to 1 GiB, then held',
    code: 'const b = new ArrayBuffer(0, { maxByteLength: 2 ** 31 }); b.resize(2 ** 30); new Uint8Array(b).fill(1); for (;;) {}',
  },
];

/**
 * A tool that runs fast until its input says otherwise: after a few warm runs the sandbox enters it synchronously
 * (docs/sandbox.md, entry mode), so its slow call holds the executor's main thread.
 */
export const SYNC_PROGRAM: HostLimitProgram = {
  name: 'fill on a huge array-like in a synchronous entry',
  code: 'if (input.n > 0) Array.prototype.fill.call({ length: input.n }, 1); return input.n;',
};
