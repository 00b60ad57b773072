/**
 * V8's young generation, per semi-space, in MB. Node's default lets each semi-space grow to 16 MB, and less in a
 * process with a small `--max-old-space-size` (the executors' 512 MB); a service allocates a few kilobytes of
 * short-lived objects per request, so under load scavenges came often. At 32 MB, `npm run bench:ab` at 64 clients
 * measured req/s 1.13× and 1.08× and p50 0.91× (twice), at one client p50 0.96× (docs/benchmarks.md). The price
 * is memory: up to two semi-spaces of this size resident under load.
 */
export const YOUNG_GENERATION_FLAG = '--max-semi-space-size=32';

/**
 * Node's own code (V8's builtins, the runtime, libuv: 24 MB of text) on 2 MB pages where the kernel allows them
 * (transparent huge pages `madvise` or `always`; `silent`: elsewhere the process starts without them and says
 * nothing). At one client every hop wakes a process whose TLB the others have emptied, and the builtins are most of
 * what it runs: p50 0.94× and 0.92×, CPU per call 0.94× and 0.89×, in two pairs of `bench:ab`-style rounds with the
 * flag on either stack; no change at 64 clients (docs/benchmarks.md). The price is memory: the text becomes private
 * to each process, ~25 MB of anonymous memory more (RSS +10 MB, the rest was file pages shared between processes).
 */
export const LARGE_PAGES_FLAG = '--use-largepages=silent';

/**
 * How toolhost tunes Node's runtime, apart from what it needs to run at all. The benchmarks' baselines (the skeleton,
 * the bare loops, thread-per-call) run with these too, so that what they measure is their hops, not a runtime
 * toolhost tunes and they do not.
 */
export const RUNTIME_TUNING_FLAGS: readonly string[] = [YOUNG_GENERATION_FLAG, LARGE_PAGES_FLAG];

/**
 * The flags every toolhost service process is started with (`npm start`, the image's entrypoint, the executors the
 * worker forks, the test and benchmark stacks). `--no-node-snapshot`: isolated-vm cannot load in a process started
 * from Node's startup snapshot.
 */
export const SERVICE_NODE_FLAGS: readonly string[] = ['--no-node-snapshot', ...RUNTIME_TUNING_FLAGS];
