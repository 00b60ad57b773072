/**
 * Programs that spend their time, or grow their process, inside one V8 built-in, where isolated-vm's own timeout
 * and memory limit do not reach (issue 17, classes 1 and 2). Shared by host-limits.e2e-spec.ts and
 * bench/host-limits.bench.ts.
 */
export interface HostLimitProgram {
  name: string;
  code: string;
}

/**
 * Each runs far past a 1 s timeout inside one call. (`fill` and `copyWithin` on huge array-likes, and resizable
 * buffers, no longer get that far: the realm refuses them up front, see docs/sandbox.md. These built-ins it does not
 * refuse are what the host's enforcement is for.)
 */
export const TIME_PROGRAMS: HostLimitProgram[] = [
  {
    name: 'lastIndexOf over a huge array-like',
    code: 'Array.prototype.lastIndexOf.call({ length: 2 ** 31 }, 1); return 1;',
  },
  { name: 'slice of a huge array-like', code: 'return Array.prototype.slice.call({ length: 2 ** 30 }).length;' },
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
  { name: 'Array.from a huge length', code: 'return Array.from({ length: 1e9 }).length;' },
  {
    name: 'concat of a huge array',
    code: 'return Array.prototype.concat.call([], Array.from({ length: 3e8 })).length;',
  },
];

/**
 * A tool that runs fast until its input says otherwise: after a few warm runs the sandbox enters it synchronously
 * (docs/sandbox.md, entry mode), so its slow call holds the executor's main thread.
 */
export const SYNC_PROGRAM: HostLimitProgram = {
  name: 'lastIndexOf over a huge array-like in a synchronous entry',
  code: 'if (input.n > 0) Array.prototype.lastIndexOf.call({ length: input.n }, 1); return input.n;',
};
