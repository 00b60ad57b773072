/** An entry into the isolate using more CPU than this is slow: it counts against the code's allowance. */
const SLOW_ENTRY_MS = 10;
/** Fast runs a version needs before its entries may block the event loop (`applySync`). */
const TRUSTED_AFTER_RUNS = 3;
/** CPU time of slow entries a version may spend at once before it never enters synchronously again. */
const SLOW_ALLOWANCE_MS = 75;
/** What each fast run gives back to the allowance. */
const SLOW_ALLOWANCE_PER_FAST_RUN_MS = 0.25;

/**
 * How one (tool, version) has behaved in this process, for the runtime's adaptive entry mode: new or slow code
 * enters the isolate asynchronously (tool code runs on isolated-vm's threads, the event loop stays free); code
 * that has proven fast enters synchronously, which costs about a quarter as much per call. Times are the isolate's
 * CPU time. The first run is not judged (it pays for compilation, and the isolate does not report a version's first
 * run in each new isolate at all).
 *
 * Slow entries draw their CPU time from an allowance that fast runs fill back, and the code that overdraws it loses
 * trust for good: a tool that turns slow blocks the event loop once (that entry may run up to its timeout), after at
 * most SLOW_ALLOWANCE_MS of slow entries, plus 0.25 ms per fast run made between them. A count of slow entries would not do: the isolate's garbage
 * collector runs inside whichever entry triggers it, so even a trivial tool has a 10–20 ms entry every 200 to 1,500
 * runs (more often with many runs in flight, which keep more alive), and a process that ran long enough would end
 * up entering every tool asynchronously.
 */
export class CodeProfile {
  private runs = 0;
  private fastRuns = 0;
  private distrusted = false;
  private allowanceMs = SLOW_ALLOWANCE_MS;

  /** True when this code's entries may be synchronous. */
  get trusted(): boolean {
    return !this.distrusted && this.fastRuns >= TRUSTED_AFTER_RUNS;
  }

  recordEntry(cpuMs: number): void {
    if (this.runs === 0 || cpuMs <= SLOW_ENTRY_MS) return;
    this.allowanceMs -= cpuMs;
    if (this.allowanceMs < 0) this.distrusted = true;
  }

  recordRun(cpuMs: number): void {
    this.runs += 1;
    if (this.runs > 1 && cpuMs > SLOW_ENTRY_MS) return;
    this.fastRuns += 1;
    this.allowanceMs = Math.min(SLOW_ALLOWANCE_MS, this.allowanceMs + SLOW_ALLOWANCE_PER_FAST_RUN_MS);
  }
}
