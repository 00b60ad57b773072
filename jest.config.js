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
  projects: [
    { ...common, displayName: 'unit', testMatch: ['**/*.spec.ts'], globalSetup: '<rootDir>/test/build-dist.js' },
    { ...common, ...withServices, displayName: 'int', testMatch: ['**/*.int-spec.ts'] },
    { ...common, ...withServices, displayName: 'e2e', testMatch: ['**/*.e2e-spec.ts', '**/*.browser-spec.ts'] },
  ],
};
