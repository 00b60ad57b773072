import { Worker } from 'node:worker_threads';
import { backoffDelayMs } from '@toolhost/contracts';
import type { JsonValue } from '@toolhost/contracts';

/**
 * Why an evaluation did not answer a value. `byExpression`: the expression's own error or limit (its caller's to
 * fix); otherwise the evaluator could not take it (overloaded, shutting down, the thread would not start).
 */
export class ExpressionError extends Error {
  constructor(
    message: string,
    readonly byExpression: boolean,
  ) {
    super(message);
  }
}

export interface ExpressionThreadOptions {
  /** CPU and wall time one expression may take once the thread has it. */
  timeoutMs: number;
  /** The thread's heap; past it the thread dies and the expression fails. */
  memoryMb: number;
  /** Expressions waiting for the thread beyond this are refused at once. */
  maxQueued: number;
  /**
   * Expressions one tenant may have waiting or running at once: the thread is every tenant's, and one tenant's
   * queue of slow expressions would otherwise hold everyone else's calls for seconds.
   */
  maxQueuedPerTenant?: number;
  /** The largest answer, in characters of its text. */
  maxResultChars: number;
  /** How long a new thread may take to load mathjs before it counts as failed to start. */
  startTimeoutMs?: number;
}

type Answer = { id: number; ok: true; result: JsonValue } | { id: number; ok: false; message: string };

interface Pending {
  id: number;
  tenant: string;
  expression: string;
  resolve: (value: JsonValue) => void;
  reject: (error: Error) => void;
}

// Plain JavaScript, evaluated as the thread's source: it needs no build step, in jest or in dist.
const THREAD_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { create, all } = require(workerData.mathjs);
const math = create(all);
parentPort.on('message', ({ id, expression }) => {
  try {
    let value = math.parse(expression).compile().evaluate(new Map());
    // A block ('r = 2; pi r^2') answers each statement's value: the last one is the answer.
    if (math.isResultSet(value)) value = value.entries.length > 0 ? value.entries[value.entries.length - 1] : null;
    let result;
    if (value === null || value === undefined) result = null;
    else if (typeof value === 'number') result = Number.isFinite(value) ? value : String(value);
    else if (typeof value === 'boolean') result = value;
    // Units, complex numbers, matrices, objects: mathjs's own text.
    else result = math.format(value);
    if (typeof result === 'string' && result.length > workerData.maxResultChars) {
      parentPort.postMessage({ id, ok: false, message: 'the result is longer than ' + workerData.maxResultChars + ' characters' });
      return;
    }
    parentPort.postMessage({ id, ok: true, result });
  } catch (error) {
    parentPort.postMessage({ id, ok: false, message: error instanceof Error ? error.message : 'invalid expression' });
  }
});
parentPort.postMessage({ ready: true });
`;

/**
 * Waiting items served one tenant at a time, in turn (Map order is the turn order): a tenant with many expressions
 * waiting does not hold back another's one.
 */
class TenantTurns<T> {
  private readonly byTenant = new Map<string, T[]>();
  length = 0;

  /** Items of `tenant` waiting. */
  count(tenant: string): number {
    return this.byTenant.get(tenant)?.length ?? 0;
  }

  push(tenant: string, item: T): void {
    const waiting = this.byTenant.get(tenant);
    if (waiting) waiting.push(item);
    else this.byTenant.set(tenant, [item]);
    this.length += 1;
  }

  shift(): T | undefined {
    const next = this.byTenant.entries().next();
    if (next.done) return undefined;
    const [tenant, waiting] = next.value;
    const item = waiting.shift();
    // To the back of the turn order, or out when it has nothing left.
    this.byTenant.delete(tenant);
    if (waiting.length > 0) this.byTenant.set(tenant, waiting);
    this.length -= 1;
    return item;
  }

  drain(): T[] {
    const all = [...this.byTenant.values()].flat();
    this.byTenant.clear();
    this.length = 0;
    return all;
  }
}

/** After a thread failed to start, new expressions are refused this long, doubling up to 30 s. */
const START_BACKOFF_FIRST_MS = 1_000;
const START_BACKOFF_MAX_MS = 30_000;

/**
 * Evaluates mathjs expressions on a thread of their own, one at a time, each within a time limit: the executor's
 * event loop is shared by every tenant's runs, and no check of an expression's text bounds what it computes (a
 * 923-character expression of matrix powers ran for 44 s). A thread past its time or memory is terminated, the
 * expression fails, and the next expression gets a new thread. The thread is started at the first expression
 * (loading mathjs takes a few hundred ms, which does not count against it) and never keeps the process alive.
 */
export class ExpressionThread {
  private worker: Worker | undefined;
  private ready = false;
  private readonly queue = new TenantTurns<Pending>();
  private current: { pending: Pending; timer: NodeJS.Timeout } | undefined;
  private nextId = 1;
  private startTimer: NodeJS.Timeout | undefined;
  private failedStarts = 0;
  private refuseUntil = 0;

  private timeoutMs: number;

  constructor(private readonly options: ExpressionThreadOptions) {
    this.timeoutMs = options.timeoutMs;
  }

  /** Changes the time limit of the expressions sent from now on (the one running keeps its own). */
  setTimeoutMs(timeoutMs: number): void {
    this.timeoutMs = timeoutMs;
  }

  evaluate(expression: string, tenant = ''): Promise<JsonValue> {
    if (Date.now() < this.refuseUntil) {
      return Promise.reject(new ExpressionError('the expression evaluator is not available; try again', false));
    }
    // Waiting or running.
    const held = this.queue.count(tenant) + (this.current?.pending.tenant === tenant ? 1 : 0);
    if (
      this.queue.length >= this.options.maxQueued ||
      held >= (this.options.maxQueuedPerTenant ?? Number.POSITIVE_INFINITY)
    ) {
      return Promise.reject(new ExpressionError('too many expressions are waiting to be evaluated; try again', false));
    }
    return new Promise<JsonValue>((resolve, reject) => {
      this.queue.push(tenant, { id: this.nextId++, tenant, expression, resolve, reject });
      this.pump();
    });
  }

  /** Ends the thread; expressions still waiting fail. */
  async close(): Promise<void> {
    clearTimeout(this.startTimer);
    const terminated = this.dropThread();
    this.failQueued(new ExpressionError('the worker is shutting down', false));
    this.fail(new ExpressionError('the worker is shutting down', false));
    await terminated;
  }

  /** Forgets the thread (its late messages and exit are then ignored) and terminates it. */
  private dropThread(): Promise<number> | undefined {
    const worker = this.worker;
    this.worker = undefined;
    this.ready = false;
    return worker?.terminate();
  }

  private pump(): void {
    if (this.current === undefined && this.queue.length > 0) {
      if (this.worker === undefined) this.start();
      else if (this.ready) {
        const next = this.queue.shift();
        if (next !== undefined) this.send(this.worker, next);
      }
    }
    this.holdProcess();
  }

  private send(worker: Worker, pending: Pending): void {
    const timeoutMs = this.timeoutMs;
    const timer = setTimeout(() => {
      this.fail(new ExpressionError(`the expression ran longer than ${timeoutMs} ms`, true));
      this.restart();
    }, timeoutMs);
    this.current = { pending, timer };
    worker.postMessage({ id: pending.id, expression: pending.expression });
  }

  /** An idle thread never keeps the process alive; one with work does, like any pending I/O. */
  private holdProcess(): void {
    if (this.worker === undefined) return;
    if (this.current !== undefined || this.queue.length > 0) this.worker.ref();
    else this.worker.unref();
  }

  /**
   * A thread that cannot start (out of resources, a broken install) must not leave expressions waiting, nor be
   * started again in a tight loop: the waiting ones fail, and new ones are refused for a growing while.
   */
  private startFailed(reason: string): void {
    clearTimeout(this.startTimer);
    void this.dropThread();
    this.failedStarts += 1;
    this.refuseUntil =
      Date.now() + backoffDelayMs(this.failedStarts, { firstMs: START_BACKOFF_FIRST_MS, maxMs: START_BACKOFF_MAX_MS });
    this.failQueued(new ExpressionError(`the expression evaluator could not start: ${reason}`, false));
  }

  private failQueued(error: ExpressionError): void {
    for (const pending of this.queue.drain()) pending.reject(error);
  }

  private start(): void {
    let worker: Worker;
    try {
      worker = new Worker(THREAD_SOURCE, {
        eval: true,
        workerData: { mathjs: require.resolve('mathjs'), maxResultChars: this.options.maxResultChars },
        resourceLimits: { maxOldGenerationSizeMb: this.options.memoryMb },
      });
    } catch (error) {
      this.startFailed(error instanceof Error ? error.message : String(error));
      return;
    }
    this.worker = worker;
    this.ready = false;
    this.startTimer = setTimeout(
      () => this.startFailed('it did not load in time'),
      this.options.startTimeoutMs ?? 10_000,
    );
    worker.on('message', (message: Answer | { ready: true }) => {
      if (worker !== this.worker) return;
      if ('ready' in message) {
        clearTimeout(this.startTimer);
        this.ready = true;
        this.failedStarts = 0;
        this.pump();
        return;
      }
      const current = this.current;
      if (current === undefined || current.pending.id !== message.id) return;
      clearTimeout(current.timer);
      this.current = undefined;
      if (message.ok) current.pending.resolve(message.result);
      else current.pending.reject(new ExpressionError(message.message, true));
      this.pump();
    });
    // Out of memory (ERR_WORKER_OUT_OF_MEMORY) or any other death: the expression it held fails, a new thread follows;
    // a thread that dies before it is ready failed to start.
    const died = (reason: string, outOfMemory: boolean): void => {
      if (worker !== this.worker) return;
      if (!this.ready) {
        this.startFailed(reason);
        return;
      }
      this.fail(
        outOfMemory
          ? new ExpressionError(`the expression used more than ${this.options.memoryMb} MB`, true)
          : new ExpressionError(`evaluation failed: ${reason}`, false),
      );
      this.restart();
    };
    worker.on('error', (error) =>
      died(error.message, (error as { code?: string }).code === 'ERR_WORKER_OUT_OF_MEMORY'),
    );
    worker.on('exit', () => died('the thread exited', false));
    // After the listeners (adding a 'message' listener refs the thread again).
    this.holdProcess();
  }

  private fail(error: ExpressionError): void {
    const current = this.current;
    if (current === undefined) return;
    clearTimeout(current.timer);
    this.current = undefined;
    current.pending.reject(error);
  }

  private restart(): void {
    void this.dropThread();
    this.pump();
  }
}
