/**
 * `npm run test:reliability`: the whole stack through the faults production brings (issue 21). Its own config, not
 * a project of the root one, so that `npm test` never runs it: each scenario starts its own processes and drives
 * load for tens of seconds. Same transform, global setup (build dist/, Postgres and Redis answer) and aliases as
 * the e2e tier; one scenario at a time (the load would otherwise measure the other scenarios).
 */
const root = `${__dirname}/../..`;
const base = require(`${root}/jest.config.js`);
const e2e = base.projects.find((project) => project.displayName === 'e2e');

module.exports = {
  rootDir: root,
  testTimeout: 600_000,
  maxWorkers: 1,
  projects: [{ ...e2e, rootDir: root, displayName: 'reliability', testMatch: ['**/*.reliability-spec.ts'] }],
};
