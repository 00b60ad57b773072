/**
 * `npm run test:leaks` (leak-report.js) against a jest run of its own: two test files in two workers, one of which
 * leaves an interval running. The report names that interval and its file, and nothing of the worker that ended.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { projectRoot } from '../../scripts/project-root';

const root = projectRoot(__dirname);

interface Report {
  lastFile: string;
  handles: string[];
  held: { type: string; file: string; stack: string[] }[];
}

describe('the jest leak report', () => {
  let dir: string;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'toolhost-leaks-'));
  });

  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('names what holds a worker after its last file, and the file that made it', () => {
    writeFileSync(
      join(dir, 'jest.config.js'),
      `module.exports = { rootDir: ${JSON.stringify(dir)}, testEnvironment: 'node', testMatch: ['**/*.test.js'],
        setupFilesAfterEnv: [${JSON.stringify(join(root, 'test/support/leak-report.setup.js'))}] };`,
    );
    writeFileSync(
      join(dir, 'leaky.test.js'),
      `test('leaves an interval', () => { setInterval(function leftRunning() {}, 60_000); });`,
    );
    writeFileSync(join(dir, 'clean.test.js'), `test('leaves nothing', () => { setTimeout(() => {}, 1).unref(); });`);
    const reports = join(dir, 'reports');
    const run = spawnSync(
      process.execPath,
      // A cache of its own: with no timings yet, jest runs the two files in two workers rather than in band.
      [
        join(root, 'node_modules/jest/bin/jest.js'),
        '--config',
        join(dir, 'jest.config.js'),
        '--maxWorkers=2',
        '--cacheDirectory',
        join(dir, 'cache'),
      ],
      {
        cwd: dir,
        encoding: 'utf8',
        env: {
          ...process.env,
          TEST_LEAK_REPORT_DIR: reports,
          NODE_OPTIONS: `--require ${join(root, 'test/support/leak-report.js')}`,
        },
        timeout: 60_000,
      },
    );
    expect(run.status).toBe(0);
    expect(run.stderr).toContain('failed to exit gracefully');
    const written = readdirSync(reports);
    // One worker was held; the other ended in time and wrote nothing.
    expect(written).toHaveLength(1);
    const report = JSON.parse(readFileSync(join(reports, written[0] ?? ''), 'utf8')) as Report;
    const timers = report.held.filter((entry) => entry.type === 'Timeout');
    expect(timers).toHaveLength(1);
    expect(timers[0]?.file).toBe(join(dir, 'leaky.test.js'));
    expect(timers[0]?.stack.join('\n')).toContain('leaky.test.js');
  });
});
