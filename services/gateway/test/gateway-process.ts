import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';

/** The production gateway's entry point; a benchmark baseline passes its own. */
export const GATEWAY_MAIN = resolve(__dirname, '../../../dist/services/gateway/src/main.js');
const START_TIMEOUT_MS = 20_000;
const STOP_TIMEOUT_MS = 15_000;

/**
 * The built gateway (`dist/`, built by jest's global setup) in a child process on a free port. A child process
 * rather than `createGatewayApp` in jest: NestJS 12 ships ES modules that jest cannot `require` on Node 20, and
 * a real process also lets tests send SIGTERM.
 */
export class GatewayProcess {
  private exitCode: Promise<number | null>;

  private constructor(
    private readonly child: ChildProcess,
    readonly url: string,
    /** Everything the process printed, for failure messages. */
    readonly output: string[],
    /** `127.0.0.1:<GRPC_PORT bound>`. */
    readonly grpcAddress: string,
  ) {
    this.exitCode = new Promise((done) => child.once('exit', (code) => done(code)));
  }

  static async start(env: Record<string, string>, main = GATEWAY_MAIN): Promise<GatewayProcess> {
    const child = spawn(process.execPath, ['--no-node-snapshot', main], {
      env: {
        PATH: process.env.PATH ?? '',
        NODE_ENV: 'test',
        LOG_LEVEL: 'info',
        GATEWAY_PORT: '0',
        GATEWAY_HOST: '127.0.0.1',
        GRPC_PORT: '0',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const output: string[] = [];
    const ports = await new Promise<{ http: number; grpc: number }>((done, fail) => {
      const timer = setTimeout(() => fail(new Error(`gateway did not start:\n${output.join('\n')}`)), START_TIMEOUT_MS);
      let buffered = '';
      child.stdout.setEncoding('utf8');
      child.stdout.on('data', (chunk: string) => {
        buffered += chunk;
        const lines = buffered.split('\n');
        buffered = lines.pop() ?? '';
        for (const line of lines) {
          output.push(line);
          if (line.includes('"msg":"gateway listening"')) {
            clearTimeout(timer);
            const { port, grpcPort } = JSON.parse(line) as { port: number; grpcPort: number };
            done({ http: port, grpc: grpcPort });
          }
        }
      });
      child.stderr.setEncoding('utf8');
      child.stderr.on('data', (chunk: string) => output.push(chunk));
      child.once('exit', (code) => {
        clearTimeout(timer);
        fail(new Error(`gateway exited with ${String(code)}:\n${output.join('\n')}`));
      });
    });
    return new GatewayProcess(child, `http://127.0.0.1:${ports.http}`, output, `127.0.0.1:${ports.grpc}`);
  }

  /** SIGTERM; resolves with the exit code (null when it had to be killed after STOP_TIMEOUT_MS). */
  async stop(): Promise<number | null> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.kill(), STOP_TIMEOUT_MS);
    const code = await this.exitCode;
    clearTimeout(timer);
    return code;
  }

  kill(): void {
    if (this.child.exitCode === null) this.child.kill('SIGKILL');
  }
}
