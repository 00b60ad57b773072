import ivm from 'isolated-vm';
import { ErrorCode, type JsonValue } from '@toolhost/contracts';
import { contentOf, type RunOutcome, type RunRequest } from '@toolhost/sandbox';
import type { SandboxRunner } from '../../services/worker/src';

/**
 * The naive baseline of `npm run bench:e2e`, never used in production: one in-process isolate, a fresh Context
 * and a fresh compile for every call, no code cache, no SES, no child processes, no `ctx.tools`. It exists so
 * the benchmark compares the real pipeline with "the same path built the obvious way" in the same run.
 */
export class FreshContextRunner implements SandboxRunner {
  private isolate = new ivm.Isolate({ memoryLimit: 128 });

  async run(request: RunRequest): Promise<RunOutcome> {
    const started = performance.now();
    const context = await this.isolate.createContext();
    try {
      const isHandle = /\bfunction\s+handle\s*\(/.test(request.code);
      const source = isHandle
        ? `${request.code.replace(/^\s*export\s+/m, '')}\n;(async () => JSON.stringify(await handle(JSON.parse(__input), {})))()`
        : `(async (input, params) => JSON.stringify(await (async () => { ${request.code} })()))(JSON.parse(__input), JSON.parse(__input))`;
      await context.global.set('__input', JSON.stringify(request.input));
      const script = await this.isolate.compileScript(source);
      const text = (await script.run(context, {
        timeout: request.limits.timeoutMs,
        promise: true,
        copy: true,
      })) as string | undefined;
      const result = (text === undefined ? null : JSON.parse(text)) as JsonValue;
      const durationMs = performance.now() - started;
      return { status: 'succeeded', result, content: contentOf(result), logs: [], durationMs, budgetUsed: 0 };
    } catch (error) {
      if (this.isolate.isDisposed) this.isolate = new ivm.Isolate({ memoryLimit: 128 });
      const message = error instanceof Error ? error.message : String(error);
      return {
        status: 'failed',
        error: { code: /timed out/i.test(message) ? ErrorCode.TIMEOUT : ErrorCode.USER_ERROR, message },
        logs: [],
        durationMs: performance.now() - started,
        budgetUsed: 0,
      };
    } finally {
      context.release();
    }
  }

  close(): Promise<void> {
    if (!this.isolate.isDisposed) this.isolate.dispose();
    return Promise.resolve();
  }
}
