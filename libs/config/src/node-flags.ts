/**
 * V8's young generation, per semi-space, in MB. Node's default lets each semi-space grow to 16 MB, and less in a
 * process with a small `--max-old-space-size` (the executors' 512 MB); a service allocates a few kilobytes of
 * short-lived objects per request, so under load scavenges came often. At 32 MB, `npm run bench:ab` at 64 clients
 * measured req/s 1.13× and 1.08× and p50 0.91× (twice), at one client p50 0.96× (docs/benchmarks.md). The price
 * is memory: up to two semi-spaces of this size resident under load.
 */
export const YOUNG_GENERATION_FLAG = '--max-semi-space-size=32';

/**
 * The flags every toolhost service process is started with (`npm start`, the image's entrypoint, the executors the
 * worker forks, the test and benchmark stacks). `--no-node-snapshot`: isolated-vm cannot load in a process started
 * from Node's startup snapshot.
 */
export const SERVICE_NODE_FLAGS: readonly string[] = ['--no-node-snapshot', YOUNG_GENERATION_FLAG];
