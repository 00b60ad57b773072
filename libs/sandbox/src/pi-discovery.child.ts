/**
 * The process PiToolDiscovery forks for one discovery: it loads the sandbox, says it is ready, discovers the one module
 * it is sent, answers and exits. Code nobody vetted, and a built-in that allocates past every isolate limit, end here
 * rather than in the process that asked (isolated-vm's limits are not a hard guarantee for their process).
 */
import { ErrorCode } from '@toolhost/contracts';
import { parseDiscoveryJob, type DiscoveryChildMessage } from './pi-discovery.protocol';
import { SandboxRuntime } from './sandbox-runtime';

const MEMORY_SAMPLE_MS = 50;

function main(): void {
  const send = process.send?.bind(process);
  if (send === undefined) throw new Error('pi-discovery.child must be forked with an IPC channel');
  let answered = false;
  const answer = (message: DiscoveryChildMessage): void => {
    if (answered) return;
    answered = true;
    send(message, undefined, undefined, () => process.exit(0));
  };
  // Its parent gone, nobody waits for the answer.
  process.on('disconnect', () => process.exit(0));
  process.once('message', (raw: unknown) => {
    const job = parseDiscoveryJob(raw);
    if (job === undefined) {
      process.exit(1);
      return;
    }
    const runtime = new SandboxRuntime({
      entryMode: 'async',
      maxIsolates: 1,
      memorySampleMs: MEMORY_SAMPLE_MS,
      maxRssBytes: job.maxRssBytes,
    });
    // The runtime's sampler ends a run whose isolate grows past memoryMb, or the process past maxRssBytes; a thread
    // still allocating inside a built-in after that is ended with the process, right after this answer.
    setInterval(() => {
      if (process.memoryUsage.rss() > job.maxRssBytes) {
        answer({
          type: 'answer',
          discovery: {
            status: 'failed',
            error: {
              code: ErrorCode.MEMORY_LIMIT,
              message: `the module's default export grew its process past ${Math.round(job.maxRssBytes / 1024 / 1024)} MB`,
            },
          },
        });
      }
    }, MEMORY_SAMPLE_MS).unref();
    void runtime.discoverPiTools(job.request).then((discovery) => answer({ type: 'answer', discovery }));
  });
  send({ type: 'ready' } satisfies DiscoveryChildMessage);
}

main();
