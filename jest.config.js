/**
 * Tests in three tiers, one jest project each (`--selectProjects unit|int|e2e`, or `npm run test:<tier>`):
 * - unit: `*.spec.ts` beside the code, pure logic: no Postgres, no Redis (dist/ is built: one spec runs a compiled
 *   class in a plain Node process);
 * - int: `*.int-spec.ts`, against the real Redis, Postgres and isolated-vm, and the built services over HTTP;
 * - e2e: `*.e2e-spec.ts`, the three services as processes; and `*.browser-spec.ts` (test/browser), the web console in
 *   Chromium against them.
 * `npm test` runs every project.
 */
const fs = require('node:fs');
const swcrc = JSON.parse(fs.readFileSync(`${__dirname}/.swcrc`, 'utf8'));

const common = {
  testEnvironment: 'node',
  // `npm run test:leaks` (test/support/leak-report.js): each file tells the report which file made what.
  ...(process.env.TEST_LEAK_REPORT_DIR ? { setupFilesAfterEnv: ['<rootDir>/test/support/leak-report.setup.js'] } : {}),
  roots: ['<rootDir>/libs', '<rootDir>/services', '<rootDir>/test', '<rootDir>/bench'],
  transform: { '^.+\\.ts$': ['@swc/jest', { ...swcrc, swcrc: false }] },
  moduleNameMapper: { '^@toolhost/(.*)$': '<rootDir>/libs/$1/src/index.ts' },
};

const withServices = {
  globalSetup: '<rootDir>/test/global-setup.js',
  globalTeardown: '<rootDir>/test/global-teardown.js',
};

module.exports = {
  testTimeout: 60_000,
  // How long a worker may take to end once told to, before jest kills it and prints "A worker process has failed to
  // exit gracefully". jest's 500 ms covers the event loop draining but not the process's teardown after it: at the
  // end of a full run a worker (~450–650 MB RSS) left its event loop 24–34 ms after the END message and was gone
  // 316–406 ms after it on a quiet machine, so under CI's load the default was sometimes short (docs/benchmarks.md,
  // twenty-second session). 1.5 s stays under the 2 s of ioredis's disconnect timer, the one real leak of this kind
  // found so far; `npm run test:leaks` reports what still holds a worker 300 ms after its END, whatever this is.
  workerGracefulExitTimeout: 1_500,
  projects: [
    { ...common, displayName: 'unit', testMatch: ['**/*.spec.ts'], globalSetup: '<rootDir>/test/build-dist.js' },
    { ...common, ...withServices, displayName: 'int', testMatch: ['**/*.int-spec.ts'] },
    { ...common, ...withServices, displayName: 'e2e', testMatch: ['**/*.e2e-spec.ts', '**/*.browser-spec.ts'] },
  ],
};
