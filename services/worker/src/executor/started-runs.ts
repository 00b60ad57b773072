/** Where an executor records its runs' starts and ends for its supervisor (see StartedLogWriter). */
export interface StartedRunsLog {
  started(jobId: string): void;
  /** `lazily`: the run was answered, and the line may leave with the next one (StartedLogWriter). */
  ended(jobId: string, lazily: boolean): void;
}

/**
 * Which of the jobs an executor holds have started: their code entered an isolate. An executor takes many jobs at
 * once, but its tenant's runs enter an isolate one entry at a time, so most of the jobs it holds under load are
 * waiting their turn; when it dies, those had no part in the crash and go back to the queue (CrashedRunRecovery)
 * instead of ending SANDBOX_CRASH. Each start is recorded as the code is about to enter, and each end of a started
 * job (an answered one's with the next write), in the executor's started log, which its supervisor reads once the
 * executor died (written synchronously: the kernel holds a write once made, so a SIGKILL right after does not lose
 * it). The list as it stands also goes with every heartbeat, for a supervisor that cannot read the log.
 */
export class StartedRuns {
  /** Jobs this executor is processing. */
  private readonly held = new Set<string>();
  private readonly started = new Set<string>();

  constructor(private readonly log: StartedRunsLog) {}

  /** The processor took this job and is about to run it. */
  taken(jobId: string): void {
    this.held.add(jobId);
  }

  /** The run of invocation `invocationId` enters its isolate (nested runs' ids are not jobs, and are ignored). */
  entered(invocationId: string): void {
    if (!this.held.has(invocationId) || this.started.has(invocationId)) return;
    this.started.add(invocationId);
    this.log.started(invocationId);
  }

  /** The processor is done with this job: `answered`, its caller has the answer, or else its handler threw. */
  settled(jobId: string, answered: boolean): void {
    this.held.delete(jobId);
    if (this.started.delete(jobId)) this.log.ended(jobId, answered);
  }

  /** The jobs started and not settled, for the heartbeat. */
  list(): string[] {
    return [...this.started];
  }
}
