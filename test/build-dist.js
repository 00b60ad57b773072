// Builds dist/ once per jest run: the sandbox pool forks compiled children, the HTTP and e2e tests start the built
// services, and one unit spec runs a compiled class in a plain Node process. Every tier's global setup calls this;
// jest runs them in one process, so a run that selects several tiers builds once.
const { execFileSync } = require('node:child_process');

module.exports = async () => {
  if (globalThis.__toolhostDistBuilt) return;
  execFileSync(
    'npx',
    ['swc', 'services', 'libs', 'scripts', 'bench', '-d', 'dist', '--copy-files', '--config-file', '.swcrc', '-q'],
    { cwd: `${__dirname}/..`, stdio: 'inherit' },
  );
  globalThis.__toolhostDistBuilt = true;
};
