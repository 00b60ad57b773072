// Builds dist/ once per jest run: the sandbox pool forks compiled children, the HTTP and e2e tests start the built
// services, and unit specs run a compiled class and a test helper (test/support) in plain Node processes. Every
// tier's global setup calls this; jest runs them in one process, so a run that selects several tiers builds once. The console (services/console, a
// browser app) is bundled by Vite into dist/console, which the registry serves; that bundle is rebuilt only when a
// file of its sources is newer, since it takes longer than the rest and rarely changes.
const { execFileSync } = require('node:child_process');
const { existsSync, readdirSync, statSync } = require('node:fs');
const { join } = require('node:path');

const root = `${__dirname}/..`;
const consoleSources = join(root, 'services', 'console');
const consoleBundle = join(root, 'dist', 'console', 'index.html');

/** The newest modification time of the files the bundle is built from (its unit specs are not). */
function newestMtime(dir) {
  return readdirSync(dir, { withFileTypes: true }).reduce((newest, entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return Math.max(newest, newestMtime(path));
    return entry.name.endsWith('.spec.ts') ? newest : Math.max(newest, statSync(path).mtimeMs);
  }, 0);
}

module.exports = async () => {
  if (globalThis.__toolhostDistBuilt) return;
  execFileSync(
    'npx',
    [
      'swc',
      'services',
      'libs',
      'scripts',
      'bench',
      'test/support',
      '-d',
      'dist',
      '--copy-files',
      '--config-file',
      '.swcrc',
      '-q',
      '--ignore',
      'services/console/**',
    ],
    { cwd: root, stdio: 'inherit' },
  );
  if (!existsSync(consoleBundle) || statSync(consoleBundle).mtimeMs < newestMtime(consoleSources)) {
    execFileSync('npx', ['vite', 'build', '--config', 'services/console/vite.config.mts'], {
      cwd: root,
      stdio: 'inherit',
    });
  }
  globalThis.__toolhostDistBuilt = true;
};
