import { Worker } from 'node:worker_threads';
import type { JsonValue } from '@toolhost/contracts';

/** Why an evaluation did not answer a value: the expression's own error, or a limit of the thread. */
export class ExpressionError extends Error {}

export interface ExpressionThreadOptions {
  /** CPU and wall time one expression may take once the thread has it. */
  timeoutMs: number;
  /** The thread's heap; past it the thread dies and the expression fails. */
  memoryMb: number;
  /** Expressions waiting for the thread beyond this are refused at once. */
  maxQueued: number;
  /** The largest answer, in characters of its text. */
  maxResultChars: number;
}

type Answer = { id: number; ok: true; result: JsonValue } | { id: number; ok: false; message: string };

interface Pending {
  id: number;
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
 * Evaluates mathjs expressions on a thread of their own, one at a time, each within a time limit: the executor's
 * event loop is shared by every tenant's runs, and no check of an expression's text bounds what it computes (a
 * 923-character expression of matrix powers ran for 44 s). A thread past its time or memory is terminated, the
 * expression fails, and the next expression gets a new thread. The thread is started at the first expression
 * (loading mathjs takes a few hundred ms, which does not count against it) and never keeps the process alive.
 */
export class ExpressionThread {
  private worker: Worker | undefined;
  private ready = false;
  private readonly queue: Pending[] = [];
  private current: { pending: Pending; timer: NodeJS.Timeout } | undefined;
  private nextId = 1;

  constructor(private readonly options: ExpressionThreadOptions) {}

  evaluate(expression: string): Promise<JsonValue> {
    if (this.queue.length >= this.options.maxQueued) {
      return Promise.reject(new ExpressionError('too many expressions are waiting to be evaluated; try again'));
    }
    return new Promise<JsonValue>((resolve, reject) => {
      this.queue.push({ id: this.nextId++, expression, resolve, reject });
      this.pump();
    });
  }

  /** Ends the thread; expressions still waiting fail. */
  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    this.ready = false;
    for (const pending of this.queue.splice(0)) pending.reject(new ExpressionError('the worker is shutting down'));
    if (this.current) this.fail(new ExpressionError('the worker is shutting down'));
    await worker?.terminate();
  }

  private pump(): void {
    this.holdProcess();
    if (this.current !== undefined || this.queue.length === 0) return;
    if (this.worker === undefined) {
      this.start();
      this.holdProcess();
      return;
    }
    if (!this.ready) return;
    const pending = this.queue.shift()!;
    const timer = setTimeout(() => {
      this.fail(new ExpressionError(`the expression ran longer than ${this.options.timeoutMs} ms`));
      this.restart();
    }, this.options.timeoutMs);
    this.current = { pending, timer };
    this.worker.postMessage({ id: pending.id, expression: pending.expression });
  }

  /** An idle thread never keeps the process alive; one with work does, like any pending I/O. */
  private holdProcess(): void {
    if (this.worker === undefined) return;
    if (this.current !== undefined || this.queue.length > 0) this.worker.ref();
    else this.worker.unref();
  }

  private start(): void {
    const worker = new Worker(THREAD_SOURCE, {
      eval: true,
      workerData: { mathjs: require.resolve('mathjs'), maxResultChars: this.options.maxResultChars },
      resourceLimits: { maxOldGenerationSizeMb: this.options.memoryMb },
    });
    this.worker = worker;
    this.ready = false;
    worker.on('message', (message: Answer | { ready: true }) => {
      if (worker !== this.worker) return;
      if ('ready' in message) {
        this.ready = true;
        this.pump();
        return;
      }
      const current = this.current;
      if (current === undefined || current.pending.id !== message.id) return;
      clearTimeout(current.timer);
      this.current = undefined;
      if (message.ok) current.pending.resolve(message.result);
      else current.pending.reject(new ExpressionError(message.message));
      this.pump();
    });
    // Out of memory (ERR_WORKER_OUT_OF_MEMORY) or any other death: the expression it held fails, a new thread follows.
    worker.on('error', (error) => {
      if (worker !== this.worker) return;
      const outOfMemory = (error as { code?: string }).code === 'ERR_WORKER_OUT_OF_MEMORY';
      this.fail(
        new ExpressionError(
          outOfMemory
            ? `the expression used more than ${this.options.memoryMb} MB`
            : `evaluation failed: ${error.message}`,
        ),
      );
      this.restart();
    });
    worker.on('exit', () => {
      if (worker !== this.worker) return;
      this.fail(new ExpressionError('evaluation failed: the thread exited'));
      this.restart();
    });
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
    const worker = this.worker;
    this.worker = undefined;
    this.ready = false;
    void worker?.terminate();
    this.pump();
  }
}
