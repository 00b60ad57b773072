/**
 * The README documents every environment variable the services read, the quick start stays two commands, and it is
 * for users: it links files inside the repository only, and keeps one table of current benchmark figures.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { configRows } from '../../scripts/config-table';

const root = join(__dirname, '..', '..');
const readme = readFileSync(join(root, 'README.md'), 'utf8');

/** The section under a `## ` heading, up to the next one. */
function section(markdown: string, heading: string): string {
  const start = markdown.indexOf(`\n## ${heading}\n`);
  if (start < 0) return '';
  const end = markdown.indexOf('\n## ', start + 1);
  return markdown.slice(start, end < 0 ? undefined : end);
}

describe('README', () => {
  it.each(configRows().map((row) => row.name))('documents %s in the configuration table', (name) => {
    expect(readme).toMatch(new RegExp(`^\\|\\s*\`${name}\`\\s*\\|`, 'm'));
  });

  it('keeps the two-command quick start', () => {
    expect(readme).toContain('npm ci && npm start');
    expect(readme).toContain('npm test');
  });

  it('links and names files inside the repository only, each of which exists', () => {
    for (const file of ['README.md', 'docs/api.md', 'docs/benchmarks.md', 'docs/operations.md']) {
      const text = readFileSync(join(root, file), 'utf8');
      expect({ file, outside: text.match(/(^|[\s(`'"])\.\.\/[\w./-]*/g) ?? [] }).toEqual({ file, outside: [] });
      const prose = text.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');
      const targets = [...prose.matchAll(/\]\(([^)#\s]+)(#[^)]*)?\)/g)]
        .map((match) => match[1] ?? '')
        .filter((target) => !/^[a-z]+:/.test(target));
      const missing = targets.filter((target) => !existsSync(resolve(dirname(join(root, file)), target)));
      expect({ file, missing }).toEqual({ file, missing: [] });
    }
  });

  it('points to the API reference inside the repository', () => {
    expect(readme).toContain('](docs/api.md)');
    const api = readFileSync(join(root, 'docs', 'api.md'), 'utf8');
    for (const code of ['VALIDATION_FAILED', 'UNAUTHORIZED', 'TOOL_NOT_FOUND', 'RATE_LIMITED', 'SANDBOX_CRASH']) {
      expect(api).toContain(`\`${code}\``);
    }
  });

  it('keeps one table of current benchmark figures, and the history in docs/benchmarks.md', () => {
    const benchmarks = section(readme, 'Benchmarks');
    const tables = benchmarks.split('\n').filter((line) => /^\|\s*-{3,}/.test(line));
    expect(tables).toHaveLength(1);
    expect(benchmarks).toContain('](docs/benchmarks.md)');
  });
});
