/**
 * Where a benchmark writes its JSON results: bench/results/<bench>-<start time>.json (not committed: per machine and
 * run; docs/benchmarks.md keeps the history), or BENCH_RESULTS_DIR. The machine and its load go in beside them.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { format, resolveConfig } from 'prettier';
import { projectRoot } from '../scripts/project-root';

export class ResultsFile {
  readonly startedAt = new Date();
  private readonly loadBefore = loadavg();

  constructor(private readonly bench: string) {}

  /**
   * Writes `results` with the machine's description, formatted as the repository's Prettier settings say (the files
   * sit in the tree, and `npm run check` reads every file Git does not ignore at the root); answers the file's path.
   */
  async write(settings: Record<string, unknown>, results: Record<string, unknown>): Promise<string> {
    const dir = process.env.BENCH_RESULTS_DIR ?? join(projectRoot(__dirname), 'bench', 'results');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, `${this.bench}-${this.startedAt.toISOString().replace(/:/g, '-')}.json`);
    const cpu = cpus();
    const machine = {
      cpus: cpu.length,
      model: cpu[0]?.model,
      node: process.version,
      // 1, 5 and 15 minute load averages: other work on the machine shows here.
      loadavg: { before: this.loadBefore, after: loadavg() },
    };
    const body = { bench: this.bench, startedAt: this.startedAt.toISOString(), machine, settings, ...results };
    const options = (await resolveConfig(file)) ?? {};
    writeFileSync(file, await format(JSON.stringify(body), { ...options, parser: 'json' }));
    return file;
  }
}
