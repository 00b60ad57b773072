/** An entry into the isolate using more CPU than this counts as a strike against the code. */
const SLOW_ENTRY_MS = 10;
/** Strikes after which the code never enters synchronously again in this process. */
const STRIKES_TO_DISTRUST = 2;
/** Fast runs a version needs before its entries may block the event loop (`applySync`). */
const TRUSTED_AFTER_RUNS = 3;

/**
 * How one (tool, version) has behaved in this process, for the runtime's adaptive entry mode: new or slow code
 * enters the isolate asynchronously (tool code runs on isolated-vm's threads, the event loop stays free); code
 * that has proven fast enters synchronously, which costs about a quarter as much per call. Times are the isolate's
 * CPU time. The first run is not judged (it pays for compilation, and the isolate does not report a version's first
 * run in each new isolate at all); after it, a second slow entry loses trust for good, so a tool that turns slow can
 * block its process's event loop at most once.
 */
export class CodeProfile {
  private runs = 0;
  private fastRuns = 0;
  private strikes = 0;

  /** True when this code's entries may be synchronous. */
  get trusted(): boolean {
    return this.strikes < STRIKES_TO_DISTRUST && this.fastRuns >= TRUSTED_AFTER_RUNS;
  }

  recordEntry(cpuMs: number): void {
    if (this.runs > 0 && cpuMs > SLOW_ENTRY_MS) this.strikes += 1;
  }

  recordRun(cpuMs: number): void {
    this.runs += 1;
    if (this.runs === 1 || cpuMs <= SLOW_ENTRY_MS) this.fastRuns += 1;
  }
}
