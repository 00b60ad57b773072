/**
 * V8's young generation, per semi-space, in MB. Node's default lets each semi-space grow to 16 MB, and less in a
 * process with a small `--max-old-space-size`; a service allocates a few kilobytes of
 * short-lived objects per request, so under load scavenges came often. At 32 MB, `npm run bench:ab` at 64 clients
 * measured req/s 1.13× and 1.08× and p50 0.91× (twice), at one client p50 0.96× (docs/benchmarks.md). The price
 * is memory: up to two semi-spaces of this size resident under load. Not for processes that run tool code
 * (EXECUTOR_NODE_FLAGS).
 */
const YOUNG_GENERATION_FLAG = '--max-semi-space-size=32';

/**
 * No allocation-site pretenuring. Once most of an allocation site's objects were found alive by a scavenge, V8
 * allocates that site's objects straight into the old generation. A service's objects live for one request;
 * pretenured, they die in the old generation, and until the next full collection those dead objects keep the young
 * ones they point at alive, which the scavenges then copy and promote in turn. Runs of one build differ: the same
 * gateway build promoted 2.8% of what it allocated in two runs and 8.8% in a third, whose scavenges then cost 3.5
 * times as much per MB allocated (`--trace-gc-nvp`, 64 clients); without pretenuring, 2.4–2.5% in four runs out of
 * four, and an executor's GC cost 0.45–0.50 ms per MB allocated against 0.64–0.68 (docs/benchmarks.md, twentieth
 * session).
 */
const PRETENURING_FLAG = '--no-allocation-site-pretenuring';

/**
 * Scavenges on the main thread alone. V8 otherwise spreads each scavenge over helper threads, which on a machine whose
 * cores the services keep busy (the worker runs an executor per core but one) wait for a core: the pause was no
 * shorter with them (an executor at 64 clients: 204–295 ms of scavenge pauses with helpers, 226–281 without, over
 * ~750 MB allocated), and their own CPU doubled the scavenges' cost (executor 0.56–0.73 ms of CPU per MB allocated
 * against 0.31–0.36, gateway 0.42–0.46 against 0.21–0.22; docs/benchmarks.md, twentieth session). Marking and
 * compaction stay concurrent.
 */
const SCAVENGE_FLAG = '--no-parallel-scavenge';

/**
 * How every toolhost process collects its garbage, and the benchmarks' baselines with it: the same hops measured
 * with the same GC.
 */
export const GC_FLAGS: readonly string[] = [YOUNG_GENERATION_FLAG, PRETENURING_FLAG, SCAVENGE_FLAG];

/**
 * The flags every toolhost service process is started with (`npm start`, the image's entrypoint, the test and
 * benchmark stacks; the executors the worker forks get EXECUTOR_NODE_FLAGS). `--no-node-snapshot`: isolated-vm
 * cannot load in a process started from Node's startup snapshot.
 */
export const SERVICE_NODE_FLAGS: readonly string[] = ['--no-node-snapshot', ...GC_FLAGS];

/**
 * The flags of the processes that run tool code (the worker's executors): the services' flags without the larger
 * young generation. V8's flags apply to every isolate in the process, and a semi-space flag overrides the young
 * generation isolated-vm sizes for an isolate: with 32 MB a 64 MB tenant isolate's heap limit is 160 MB instead of
 * 67, and isolated-vm ends an isolate only past that heap limit, so a run could hold ~96 MB more than its
 * `memoryMb` (docs/sandbox.md, "Node versions").
 */
export const EXECUTOR_NODE_FLAGS: readonly string[] = SERVICE_NODE_FLAGS.filter(
  (flag) => flag !== YOUNG_GENERATION_FLAG,
);
