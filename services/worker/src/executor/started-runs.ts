/**
 * Which of the jobs an executor holds have started: their code entered an isolate. An executor takes many jobs at
 * once, but its tenant's runs enter an isolate one entry at a time, so most of the jobs it holds under load are
 * waiting their turn; when it dies, those had no part in the crash and go back to the queue (CrashedRunRecovery)
 * instead of ending SANDBOX_CRASH. The supervisor learns each start from a 'started' message, sent as the code is
 * about to enter (not waited for: a write to a local socket that the kernel holds once made, so a SIGKILL right
 * after does not lose it; one still queued behind a full socket is lost, and that job then runs again elsewhere,
 * as BullMQ's at-least-once delivery allows), and the list as it stands with every heartbeat, which drops the
 * jobs that ended meanwhile.
 */
export class StartedRuns {
  /** Jobs this executor is processing. */
  private readonly held = new Set<string>();
  private readonly started = new Set<string>();

  constructor(private readonly announce: (jobId: string) => void) {}

  /** The processor took this job and is about to run it. */
  taken(jobId: string): void {
    this.held.add(jobId);
  }

  /** The run of invocation `invocationId` enters its isolate (nested runs' ids are not jobs, and are ignored). */
  entered(invocationId: string): void {
    if (!this.held.has(invocationId) || this.started.has(invocationId)) return;
    this.started.add(invocationId);
    this.announce(invocationId);
  }

  /** The processor is done with this job (its handler returned or threw). */
  settled(jobId: string): void {
    this.held.delete(jobId);
    this.started.delete(jobId);
  }

  /** The jobs started and not settled, for the heartbeat. */
  list(): string[] {
    return [...this.started];
  }
}
