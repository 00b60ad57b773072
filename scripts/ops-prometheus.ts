/**
 * `npm run ops:prometheus`: the dashboard against a real Prometheus (Debian's `prometheus` package). Uses the stack
 * of `npm start` when it answers on the default ports, else starts one (the same script) and stops it at the end;
 * starts Prometheus scraping the three services every 2 s with the alert rules loaded, waits until every target is
 * up, sends a few invocations so that rates have something to count, evaluates each dashboard query once and
 * prints how many return data.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { projectRoot } from './project-root';
import { createDemoTool, postJson } from './demo-tool';

const root = projectRoot(__dirname);
// `npm start`'s ports, or the ones its environment sets (it reads the same variables).
const SERVICES = {
  registry: Number(process.env.REGISTRY_PORT ?? 3001),
  gateway: Number(process.env.GATEWAY_PORT ?? 3000),
  worker: Number(process.env.WORKER_PORT ?? 3002),
};
const SCRAPE_INTERVAL_S = 2;
const STARTUP_TIMEOUT_MS = 120_000;
const INVOCATIONS = 20;

function log(message: string): void {
  console.log(`[ops:prometheus] ${message}`);
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs = STARTUP_TIMEOUT_MS): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  throw new Error(`${what}: not within ${timeoutMs} ms`);
}

const ready = (port: number): Promise<boolean> =>
  fetch(`http://127.0.0.1:${port}/health/ready`, { signal: AbortSignal.timeout(2_000) }).then(
    (response) => response.ok,
    () => false,
  );

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

function stopChild(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  return exited;
}

function prometheusConfig(): string {
  const jobs = Object.entries(SERVICES).map(
    ([job, port]) => `  - job_name: ${job}\n    static_configs: [{ targets: ['127.0.0.1:${port}'] }]`,
  );
  return [
    'global:',
    `  scrape_interval: ${SCRAPE_INTERVAL_S}s`,
    `  evaluation_interval: ${SCRAPE_INTERVAL_S}s`,
    'rule_files:',
    `  - ${join(root, 'deploy/observability/alerts.yaml')}`,
    'scrape_configs:',
    ...jobs,
    '',
  ].join('\n');
}

interface Dashboard {
  panels: { title: string; targets: { expr: string }[] }[];
}

interface QueryAnswer {
  status: string;
  error?: string;
  data?: { result: unknown[] };
}

async function query(base: string, expr: string): Promise<QueryAnswer> {
  const response = await fetch(`${base}/api/v1/query?query=${encodeURIComponent(expr)}`);
  return (await response.json()) as QueryAnswer;
}

/** The development admin key `npm start` keeps in .toolhost/dev.env. */
function devAdminKey(): string {
  const file = join(root, '.toolhost', 'dev.env');
  const line = existsSync(file)
    ? readFileSync(file, 'utf8')
        .split('\n')
        .find((entry) => entry.startsWith('TOOLHOST_ADMIN_KEY='))
    : undefined;
  if (!line) throw new Error('no TOOLHOST_ADMIN_KEY in .toolhost/dev.env: is this the stack of `npm start`?');
  return line.slice('TOOLHOST_ADMIN_KEY='.length);
}

/** A tenant, a tool and a few invocations of it, so that the rate and latency panels have samples. */
async function traffic(): Promise<void> {
  const admin = devAdminKey();
  const registry = `http://127.0.0.1:${SERVICES.registry}`;
  const { key, toolName } = await createDemoTool(registry, admin, `ops-prometheus-${Date.now()}`);
  for (let i = 0; i < INVOCATIONS; i++) {
    await postJson(`http://127.0.0.1:${SERVICES.gateway}/v1/invocations`, key, {
      tool: toolName,
      input: { a: i, b: 1 },
    });
  }
}

async function main(): Promise<void> {
  let stack: ChildProcess | undefined;
  let prometheus: ChildProcess | undefined;
  const dir = mkdtempSync(join(tmpdir(), 'toolhost-prometheus-'));
  try {
    const up = await Promise.all(Object.values(SERVICES).map(ready));
    if (up.every(Boolean)) {
      log('using the running stack of `npm start`');
    } else {
      log('starting the stack (dist/scripts/start.js, as `npm start`)');
      stack = spawn(process.execPath, ['--no-node-snapshot', join(root, 'dist/scripts/start.js')], {
        cwd: root,
        stdio: ['ignore', 'ignore', 'inherit'],
      });
      await until('the stack ready', async () =>
        (await Promise.all(Object.values(SERVICES).map(ready))).every(Boolean),
      );
    }

    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    writeFileSync(join(dir, 'prometheus.yml'), prometheusConfig());
    prometheus = spawn(
      'prometheus',
      [
        `--config.file=${join(dir, 'prometheus.yml')}`,
        `--storage.tsdb.path=${join(dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
      ],
      { stdio: 'ignore' },
    );
    prometheus.once('error', (error) => {
      console.error(`[ops:prometheus] prometheus did not start (apt-get install prometheus): ${error.message}`);
    });
    await until('every target up', async () => {
      const response = await fetch(`${base}/api/v1/targets`);
      const { data } = (await response.json()) as { data: { activeTargets: { health: string }[] } };
      return data.activeTargets.length === 3 && data.activeTargets.every((target) => target.health === 'up');
    });
    log(`Prometheus ${base}: all 3 targets up`);

    await traffic();
    log(`sent ${INVOCATIONS} invocations; waiting for two more scrapes`);
    await new Promise((resolve) => setTimeout(resolve, 3 * SCRAPE_INTERVAL_S * 1000));

    const dashboard = JSON.parse(readFileSync(join(root, 'deploy/observability/dashboard.json'), 'utf8')) as Dashboard;
    let total = 0;
    let withData = 0;
    for (const panel of dashboard.panels) {
      for (const { expr } of panel.targets) {
        // Grafana's variable, as it would expand for a 2 s scrape interval (at least 4 scrapes).
        const answer = await query(base, expr.replaceAll('$__rate_interval', '1m'));
        const series = answer.status === 'success' ? (answer.data?.result.length ?? 0) : 0;
        total += 1;
        if (series > 0) withData += 1;
        const state = answer.status === 'success' ? `${series} series` : `error: ${answer.error ?? '?'}`;
        console.log(`  ${series > 0 ? 'data   ' : 'no data'}  ${panel.title}: ${state}`);
      }
    }
    log(`${withData} of ${total} dashboard queries return data`);
  } finally {
    await stopChild(prometheus);
    await stopChild(stack);
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error('[ops:prometheus] failed:', error instanceof Error ? error.message : error);
  process.exit(1);
});
