/**
 * Reads `process.memoryUsage()` of another running Node process (an executor, for `bench:scale`): SIGUSR1 opens its
 * inspector on 127.0.0.1:9229, and one `Runtime.evaluate` over the DevTools protocol asks, after a full garbage
 * collection. The executors count no heap metrics of their own, and this needs no change to them. The inspector stays
 * open until the process exits, so only a benchmark's own processes are asked. Linux; undefined when port 9229 is
 * taken or the process does not answer.
 */
import { WebSocket } from 'undici';
import { listeningPorts } from '../test/support/listening-ports';

const PORT = 9229;

export interface ProcessMemory {
  rss: number;
  heapTotal: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
}

function call(socket: WebSocket, id: number, method: string, params: Record<string, unknown> = {}): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const onMessage = (event: { data: unknown }): void => {
      const message = JSON.parse(String(event.data)) as { id?: number; result?: unknown; error?: { message: string } };
      if (message.id !== id) return;
      socket.removeEventListener('message', onMessage);
      if (message.error) reject(new Error(message.error.message));
      else resolve(message.result);
    };
    socket.addEventListener('message', onMessage);
    socket.send(JSON.stringify({ id, method, params }));
  });
}

export async function memoryOf(pid: number): Promise<ProcessMemory | undefined> {
  if (!listeningPorts(pid).includes(PORT)) {
    process.kill(pid, 'SIGUSR1');
    const deadline = Date.now() + 5_000;
    while (!listeningPorts(pid).includes(PORT)) {
      if (Date.now() > deadline) return undefined;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  const targets = (await (await fetch(`http://127.0.0.1:${PORT}/json/list`)).json()) as {
    webSocketDebuggerUrl: string;
  }[];
  const url = targets[0]?.webSocketDebuggerUrl;
  if (url === undefined) return undefined;
  const socket = new WebSocket(url);
  await new Promise((resolve, reject) => {
    socket.addEventListener('open', resolve, { once: true });
    socket.addEventListener('error', reject, { once: true });
  });
  try {
    await call(socket, 1, 'HeapProfiler.collectGarbage');
    const answer = (await call(socket, 2, 'Runtime.evaluate', {
      expression: 'JSON.stringify(process.memoryUsage())',
      returnByValue: true,
    })) as { result: { value: string } };
    return JSON.parse(answer.result.value) as ProcessMemory;
  } finally {
    socket.close();
  }
}
