/**
 * A Postgres cluster of the test's own, in a temporary folder on its own port, to stop and start at will: a test
 * that takes Postgres away must never touch the shared server others use. Built with the machine's initdb/pg_ctl
 * (/usr/lib/postgresql/<n>/bin); as root they run as the `postgres` user (initdb refuses root).
 */
import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { freePort } from './registry-server';

function binDir(): string {
  const base = '/usr/lib/postgresql';
  const versions = existsSync(base) ? readdirSync(base).sort((a, b) => Number(b) - Number(a)) : [];
  const found = versions.map((version) => join(base, version, 'bin')).find((dir) => existsSync(join(dir, 'pg_ctl')));
  if (found === undefined) throw new Error(`no pg_ctl under ${base}`);
  return found;
}

export class PostgresCluster {
  private constructor(
    readonly port: number,
    private readonly dir: string,
    private readonly bin: string,
    private readonly asPostgres: boolean,
  ) {}

  /** `postgres://postgres@127.0.0.1:<port>` (no database name), as Stack's `postgresUrl` takes it. */
  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}`;
  }

  /** initdb (trust, no fsync: a throwaway cluster) and start; resolves once it accepts connections. */
  static async create(): Promise<PostgresCluster> {
    const dir = mkdtempSync(join(tmpdir(), 'toolhost-pg-'));
    const asPostgres = userInfo().uid === 0;
    if (asPostgres) {
      const ids = execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim();
      const group = execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim();
      chownSync(dir, Number(ids), Number(group));
    }
    const cluster = new PostgresCluster(await freePort(), dir, binDir(), asPostgres);
    cluster.run('initdb', ['-D', cluster.dataDir, '-A', 'trust', '-U', 'postgres', '--no-sync']);
    cluster.start();
    return cluster;
  }

  private get dataDir(): string {
    return join(this.dir, 'data');
  }

  private run(tool: string, args: string[]): void {
    const command = join(this.bin, tool);
    const [file, argv] = this.asPostgres ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args];
    execFileSync(file, argv, { stdio: 'ignore', timeout: 60_000 });
  }

  /** Starts the server and waits until it accepts connections (`pg_ctl -w`). */
  start(): void {
    const options = `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200`;
    this.run('pg_ctl', ['-D', this.dataDir, '-o', options, '-l', join(this.dir, 'log'), '-w', 'start']);
  }

  /** Stops it at once (`-m immediate`: an outage, connections dropped, not a clean shutdown). */
  stop(): void {
    this.run('pg_ctl', ['-D', this.dataDir, '-m', 'immediate', '-w', 'stop']);
  }

  /** Stops it if it runs and deletes its folder. */
  remove(): void {
    try {
      this.run('pg_ctl', ['-D', this.dataDir, '-m', 'immediate', '-w', 'stop']);
    } catch {
      // not running
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}
