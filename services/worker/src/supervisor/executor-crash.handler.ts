import { Logger } from '@nestjs/common';
import { ErrorCode } from '@toolhost/contracts';
import type { MetricsService } from '@toolhost/observability';
import type { RunOverrun } from '@toolhost/sandbox';
import type { OutcomePublisher } from '../outcomes/outcome-publisher';
import { WORKER_COUNTERS } from '../worker-metrics';
import type { CrashedRunRecovery } from './crashed-run-recovery';

/**
 * What the supervisor does when an executor dies: recovery ends (or puts back) the runs it held, the runs it ended are
 * counted here (the dead executor cannot count them; summed with the executors' own series of the same name), and
 * what happened is logged once.
 */
export class ExecutorCrashHandler {
  private readonly logger = new Logger('ExecutorCrashHandler');
  private readonly crashedRuns;
  private readonly requeued;

  constructor(
    private readonly recovery: CrashedRunRecovery,
    private readonly outcomes: OutcomePublisher,
    metrics: MetricsService,
  ) {
    this.crashedRuns = metrics.counter(...WORKER_COUNTERS.invocations);
    this.requeued = metrics.counter(...WORKER_COUNTERS.crashRequeued);
  }

  async onCrash(
    workerId: string,
    reason: string,
    soloJobId?: string,
    overrun?: RunOverrun,
    started?: ReadonlySet<string>,
  ): Promise<void> {
    const { ended, requeued, accused, culprit } = await this.recovery.recover(
      workerId,
      reason,
      soloJobId,
      overrun,
      started,
    );
    this.requeued.inc(requeued);
    // A run whose caller had been answered ends with that answer, so each is counted by its own status and code.
    for (const invocation of ended) {
      this.crashedRuns.inc({ status: invocation.status, code: invocation.error?.code ?? 'OK' });
    }
    await this.outcomes.drain();
    const crashed = ended.filter((invocation) => invocation.error?.code === ErrorCode.SANDBOX_CRASH).length;
    if (ended.length + requeued === 0) return;
    this.logger.warn(
      {
        sandboxCrash: crashed,
        endedWithAnswer: ended.length - crashed,
        requeued,
        culprit: culprit ?? null,
        suspected: accused,
      },
      culprit === undefined
        ? 'ended the runs of a dead executor; the tool versions it held run alone until they run cleanly'
        : 'ended the run that killed its executor while running alone; the jobs waiting behind it are queued again',
    );
  }
}
