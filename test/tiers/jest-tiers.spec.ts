/**
 * Tests run in three tiers (issue 16 item 8): every test file belongs to exactly one jest project, `npm run
 * test:<tier>` selects that project, `npm test` runs them all, and the unit tier starts neither Postgres nor Redis.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { projectRoot } from '../../scripts/project-root';

/** A testMatch glob as jest reads it, for the `**` and `*` these patterns use. */
function globMatches(path: string, pattern: string): boolean {
  const source = pattern
    .split('**/')
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*'))
    .join('(?:.*/)?');
  return new RegExp(`^${source}$`).test(path);
}

interface Project {
  displayName: string;
  testMatch: string[];
  globalSetup?: string;
}

const root = projectRoot(__dirname);
// eslint-disable-next-line @typescript-eslint/no-require-imports
const config = require(join(root, 'jest.config.js')) as { projects: Project[] };
const scripts = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> })
  .scripts;

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : testFiles(path);
    return /(\.|-)spec\.ts$/.test(entry.name) ? [relative(root, path)] : [];
  });
}

describe('test tiers', () => {
  const tiers = ['unit', 'int', 'e2e'];

  it('are the jest projects unit, int and e2e', () => {
    expect(config.projects.map((project) => project.displayName)).toEqual(tiers);
  });

  it('put every test file in exactly one tier, by its suffix', () => {
    const files = ['libs', 'services', 'test', 'bench'].flatMap((folder) => testFiles(join(root, folder)));
    expect(files.length).toBeGreaterThan(50);
    const misplaced = files.flatMap((file) => {
      // The reliability suite has a config of its own (below), outside `npm test`.
      if (file.endsWith('.reliability-spec.ts')) return [];
      const matched = config.projects.filter((project) =>
        project.testMatch.some((pattern) => globMatches(file, pattern)),
      );
      // Browser tests drive the console in Chromium against the running services: the e2e tier.
      const e2e = file.endsWith('.e2e-spec.ts') || file.endsWith('.browser-spec.ts');
      const expected = e2e ? 'e2e' : file.endsWith('.int-spec.ts') ? 'int' : 'unit';
      const names = matched.map((project) => project.displayName);
      return names.length === 1 && names[0] === expected ? [] : [`${file}: ${names.join(', ') || 'no tier'}`];
    });
    expect(misplaced).toEqual([]);
  });

  it('have an npm script each, and npm test runs them all', () => {
    for (const tier of tiers) expect(scripts[`test:${tier}`]).toMatch(new RegExp(`--selectProjects ${tier}( |$)`));
    expect(scripts.test).toContain('jest');
    expect(scripts.test).not.toContain('--selectProjects');
  });

  it('leave the reliability suite to its own config and npm script, out of npm test', () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const reliability = require(join(root, 'test', 'reliability', 'jest.config.js')) as { projects: Project[] };
    const files = testFiles(join(root, 'test')).filter((file) => file.endsWith('.reliability-spec.ts'));
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) {
      expect(reliability.projects.some((project) => project.testMatch.some((p) => globMatches(file, p)))).toBe(true);
      expect(config.projects.some((project) => project.testMatch.some((p) => globMatches(file, p)))).toBe(false);
    }
    expect(scripts['test:reliability']).toContain('--config test/reliability/jest.config.js');
  });

  it('leave Postgres and Redis out of the unit tier', () => {
    const unit = config.projects.find((project) => project.displayName === 'unit');
    const setup = readFileSync(join(root, (unit?.globalSetup ?? '').replace('<rootDir>', '.')), 'utf8');
    expect(setup).not.toMatch(/postgres|redis|testcontainers/i);
  });
});
