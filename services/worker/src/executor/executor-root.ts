import type Redis from 'ioredis';
import { InputValidatorCache, retryWithBackoff } from '@toolhost/contracts';
import {
  closeRedis,
  createRedis,
  outcomesStreamKey,
  redisAway,
  reportConnectionState,
  type ConnectionStateLog,
} from '@toolhost/queue';
import type { MetricsService } from '@toolhost/observability';
import { BuiltinRegistry } from '../builtins/builtin-registry';
import { CalculateBuiltin } from '../builtins/calculate.builtin';
import { OperatorToolsClient } from '../builtins/operator-tools.client';
import { CrashSuspects } from '../crash-blame/crash-suspects';
import { WorkerEgress } from '../egress/worker-egress';
import { executorLockDurationMs } from '../ipc/executor-deadlines';
import { InvocationProcessor, type SoloRuns } from './invocation.processor';
import { InvocationRunner } from '../run/invocation-runner';
import { ProcessorMetrics, type ErrorLog } from './processor-metrics';
import { ReplyPublisher } from '../outcomes/reply-publisher';
import { OutcomePublisher } from '../outcomes/outcome-publisher';
import { RegistryClient } from '../registry/registry.client';
import { ToolCatalog } from '../registry/tool-catalog';
import { ToolChangeSubscriber } from '../registry/tool-change.subscriber';
import type { SandboxRunner } from '../run/sandbox-runner';
import type { StartedRuns } from './started-runs';
import type { WorkerConfig } from '../worker.config';

/**
 * The executor process's composition root: its plain classes wired in one place, in the order they start and stop.
 * Not a Nest application context, on purpose: every piece it wires is tested in process by jest, which cannot load
 * NestJS 12 (ESM-only) on Node 20, and a forked child that consumes one queue gains nothing from a module graph but
 * its boot time. The supervisor process, which serves HTTP, is the Nest application (WorkerModule).
 */
export class ExecutorRoot {
  readonly catalog: ToolCatalog;
  readonly registry: RegistryClient;
  private readonly queueConnection: Redis;
  private readonly producer: Redis;
  private readonly outcomes: OutcomePublisher;
  private readonly toolChanges: ToolChangeSubscriber;
  private readonly builtins: BuiltinRegistry;
  private readonly egress: WorkerEgress;
  private readonly processor: InvocationProcessor;
  private readonly suspects: CrashSuspects | undefined;
  private started = false;
  private readonly sandbox: SandboxRunner;

  constructor(
    private readonly config: WorkerConfig,
    parts: {
      sandbox: SandboxRunner;
      /** Keep tool versions and compiled input validators by (tool, version) (see ExecutorParts). */
      cacheTools: boolean;
      /** Which jobs have started, for the supervisor (an executor's; see StartedRuns). */
      runs?: StartedRuns;
    },
    metrics: MetricsService,
    logger: ErrorLog & ConnectionStateLog,
    /**
     * How this runtime tells its supervisor that a crash suspect's run goes alone, and that it ended. Given in an
     * executor; without it (no supervisor to pin a crash on the run) suspects run like any tool.
     */
    soloAnnouncer?: Pick<SoloRuns, 'announce' | 'ended'>,
  ) {
    this.registry = new RegistryClient(config.REGISTRY_URL, config.INTERNAL_API_TOKEN);
    this.sandbox = parts.sandbox;
    this.catalog = new ToolCatalog(this.registry, parts.cacheTools);
    this.toolChanges = new ToolChangeSubscriber(
      config.REDIS_URL,
      config.QUEUE_PREFIX,
      (event) => this.catalog.invalidate(event.toolId),
      // Heard before a crashed run's caller is answered, so before it can try again (see CrashSuspects).
      soloAnnouncer ? (message) => this.suspects?.heard(message) : undefined,
    );
    this.queueConnection = createRedis(config.REDIS_URL, 'worker', 'toolhost-worker-jobs');
    this.producer = createRedis(config.REDIS_URL, 'worker', 'toolhost-worker-producer');
    reportConnectionState(this.queueConnection, 'toolhost-worker-jobs', logger);
    this.outcomes = new OutcomePublisher(this.producer, outcomesStreamKey(config.QUEUE_PREFIX));
    const suspects = soloAnnouncer ? new CrashSuspects(this.producer, config.QUEUE_PREFIX) : undefined;
    this.suspects = suspects;
    const operator = config.BUILTIN_TOOLS_URL
      ? new OperatorToolsClient(config.BUILTIN_TOOLS_URL, config.BUILTIN_TOOLS_TIMEOUT_MS)
      : undefined;
    this.builtins = new BuiltinRegistry([new CalculateBuiltin()], operator);
    this.egress = new WorkerEgress(config, metrics, logger);
    const runner = new InvocationRunner(
      this.catalog,
      parts.sandbox,
      this.builtins,
      new InputValidatorCache({ enabled: parts.cacheTools }),
      this.outcomes,
      {
        wallClockMs: config.INVOCATION_WALL_CLOCK_MS,
        toolCallBudget: config.TOOL_CALL_BUDGET,
      },
      this.egress,
    );
    this.processor = new InvocationProcessor(
      runner,
      // The run's outcomes go with its answer when they wait for a write (both are on the producer connection).
      new ReplyPublisher(this.producer, this.outcomes),
      new ProcessorMetrics(metrics, logger),
      {
        connection: this.queueConnection,
        prefix: config.QUEUE_PREFIX,
        concurrency: config.WORKER_CONCURRENCY,
        lockDurationMs: executorLockDurationMs(config),
        outcomes: this.outcomes,
        ...(parts.runs ? { runs: parts.runs } : {}),
        ...(suspects && soloAnnouncer
          ? {
              solo: {
                isSuspect: (tool) => suspects.has(tool),
                announce: (jobId) => soloAnnouncer.announce(jobId),
                ended: (jobId) => soloAnnouncer.ended(jobId),
                clear: (tool) => suspects.clear(tool),
              },
            }
          : {}),
      },
    );
  }

  /**
   * Waits for Redis and the registry (a worker that cannot fetch code must not take jobs) and subscribes to tool
   * changes; true when ready, false when aborted. A standby executor does this before it is needed, so that
   * promoting it only has to `consume()`.
   */
  async prepare(signal: AbortSignal): Promise<boolean> {
    try {
      // Until both answer; only an abort ends the wait.
      await retryWithBackoff(
        async () => {
          await this.producer.ping();
          const registry = await fetch(`${this.config.REGISTRY_URL}/health/live`, {
            signal: AbortSignal.timeout(2_000),
          });
          if (!registry.ok) throw new Error(`the registry answered ${registry.status}`);
        },
        { firstMs: 100, maxMs: 2_000, signal },
      );
    } catch {
      return false;
    }
    await this.toolChanges.start();
    // Read before the first job is taken: a suspect's job taken by a fresh executor goes alone too.
    await this.suspects?.start();
    return true;
  }

  consume(concurrency?: number): void {
    if (this.started) return;
    this.processor.start(concurrency);
    this.started = true;
  }

  get workerId(): string {
    return this.processor.workerId;
  }

  get isConsuming(): boolean {
    return this.started;
  }

  /**
   * Drain: stop taking jobs, finish active ones, flush outcomes, then close the sandbox and connections. With Redis
   * away (or gone during the drain) what waits on it (a job's completion, an outcome's write) would wait out the
   * outage: it is not waited for, and the connections are dropped; the process exits as at a crash, whose rules
   * (crash recovery, the stalled check) then own those jobs.
   */
  async stop(): Promise<void> {
    try {
      await Promise.race([this.drain(), redisAway(this.queueConnection), redisAway(this.producer)]);
    } finally {
      // Closed even when the drain failed: its error is the caller's, the connections are not left open.
      await Promise.allSettled([closeRedis(this.producer), closeRedis(this.queueConnection)]);
    }
  }

  private async drain(): Promise<void> {
    try {
      await this.processor.close();
      this.suspects?.stop();
      await this.outcomes.drain();
    } finally {
      await this.sandbox.close();
      await this.builtins.close();
      await this.egress.close();
      await this.toolChanges.close();
    }
  }
}
