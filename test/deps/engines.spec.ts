/**
 * The Node version package.json's `engines` names is one every installed package supports (issue 16: the README
 * said 20.19+ while four dependencies wanted 22, and `npm ci` warned). Reads the lock file, so a dependency bump
 * that raises the floor fails here before it reaches a user's `npm ci`.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../../scripts/project-root';

// semver ships with npm and is in the lock; its types are not installed, so the two calls used are typed here.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const semver = require('semver') as {
  minVersion(range: string): { version: string } | null;
  satisfies(version: string, range: string): boolean;
};

interface LockPackage {
  version?: string;
  engines?: { node?: string } | string[];
  optional?: boolean;
  os?: string[];
}

const root = projectRoot(__dirname);
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { engines: { node: string } };
const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, LockPackage>;
};

describe('engines', () => {
  const floor = semver.minVersion(manifest.engines.node)?.version ?? '';

  it('names a Node version', () => {
    expect(floor).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it('is supported by every package in the lock file', () => {
    const unsupported = Object.entries(lock.packages)
      .filter(([path]) => path !== '')
      .flatMap(([path, pkg]) => {
        const range = !pkg.engines || Array.isArray(pkg.engines) ? undefined : pkg.engines.node;
        return range !== undefined && !semver.satisfies(floor, range)
          ? [`${path}@${String(pkg.version)}: ${range}`]
          : [];
      });
    expect(unsupported).toEqual([]);
  });
});
