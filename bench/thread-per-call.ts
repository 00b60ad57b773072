/**
 * The thread-per-call baseline of `bench:e2e`, the pattern of the platforms that run user code this way: a plain
 * `node:http` server starts a new worker thread for every call, and the thread runs the tool's code with
 * `vm.runInNewContext` and posts the result back. No queue, no auth, no validation, no limit on threads.
 *
 * Run as a child: `thread-per-call.js server <tools as JSON>`.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Worker } from 'node:worker_threads';
import { GC_FLAGS } from '@toolhost/config';
import { reapOnExit } from '../test/support/reap-on-exit';

/** The thread's program: run the script in a new context, post its answer (the JSON of the result, or an error). */
const THREAD = `
const { parentPort, workerData } = require('node:worker_threads');
const vm = require('node:vm');
Promise.resolve(vm.runInNewContext(workerData.script, { __input: workerData.input }, { timeout: 10000 })).then(
  (text) => parentPort.postMessage({ text }),
  (error) => parentPort.postMessage({ error: String(error) }),
);`;

function runInThread(script: string, input: string): Promise<{ text?: string; error?: string }> {
  return new Promise((resolve) => {
    const thread = new Worker(THREAD, { eval: true, workerData: { script, input } });
    thread.once('message', resolve);
    thread.once('error', (error) => resolve({ error: error.message }));
  });
}

/** `scripts`: tool name → a script that evaluates to its result as JSON, reading `__input` (bench-tools scriptOf). */
function server(scripts: Record<string, string>): void {
  let inFlight = 0;
  const http = createServer((request, response) => {
    // For the benchmark: whether the calls of a round that ended are still running.
    if (request.method === 'GET') {
      response.end(String(inFlight));
      return;
    }
    inFlight += 1;
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const { tool, input } = JSON.parse(Buffer.concat(chunks).toString()) as { tool: string; input: unknown };
      const script = scripts[tool] ?? 'throw new Error("no such tool")';
      void runInThread(script, JSON.stringify(input)).then(({ text, error }) => {
        inFlight -= 1;
        const body =
          text === undefined ? JSON.stringify({ status: 'failed', error }) : `{"status":"succeeded","result":${text}}`;
        response.writeHead(text === undefined ? 500 : 200, {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
        });
        response.end(body);
      });
    });
  });
  http.listen(0, '127.0.0.1', () => process.send?.((http.address() as AddressInfo).port));
}

/** Starts the server; `stop` kills it. */
export async function startThreadPerCall(scripts: Record<string, string>): Promise<{
  url: string;
  processes: Record<'server', () => number[]>;
  /** Calls still running (the load stopped sending; the threads it started have not all finished). */
  inFlight: () => Promise<number>;
  stop: () => Promise<void>;
}> {
  const child: ChildProcess = reapOnExit(
    fork(__filename, ['server', JSON.stringify(scripts)], { execArgv: [...GC_FLAGS] }),
  );
  const port = await new Promise((resolve) => child.once('message', resolve));
  return {
    url: `http://127.0.0.1:${String(port)}`,
    processes: { server: () => (child.pid === undefined ? [] : [child.pid]) },
    inFlight: async () => Number(await (await fetch(`http://127.0.0.1:${String(port)}/`)).text()),
    stop: () => {
      child.kill();
      return Promise.resolve();
    },
  };
}

const [, , role, scripts] = process.argv;
if (role === 'server') server(JSON.parse(scripts ?? '{}') as Record<string, string>);
