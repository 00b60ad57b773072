/** One jest run for every tier: unit specs beside the code, tests against real Redis/Postgres, e2e in test/. */
const fs = require('node:fs');
const swcrc = JSON.parse(fs.readFileSync(`${__dirname}/.swcrc`, 'utf8'));

module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/libs', '<rootDir>/services', '<rootDir>/test', '<rootDir>/bench'],
  testMatch: ['**/*.spec.ts', '**/*.int-spec.ts', '**/*.e2e-spec.ts'],
  transform: { '^.+\\.ts$': ['@swc/jest', { ...swcrc, swcrc: false }] },
  moduleNameMapper: { '^@toolhost/(.*)$': '<rootDir>/libs/$1/src/index.ts' },
  testTimeout: 60_000,
  globalSetup: '<rootDir>/test/global-setup.js',
  globalTeardown: '<rootDir>/test/global-teardown.js',
};
