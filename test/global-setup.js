// Builds dist/ once per jest run: the sandbox pool forks compiled children and e2e tests start the built services.
const { execFileSync } = require('node:child_process');

module.exports = async () => {
  execFileSync(
    'npx',
    ['swc', 'services', 'libs', 'scripts', '-d', 'dist', '--copy-files', '--config-file', '.swcrc', '-q'],
    {
      cwd: `${__dirname}/..`,
      stdio: 'inherit',
    },
  );
};
