// For leak-report.js (`npm run test:leaks`): the resources made from here on belong to this test file.
const report = require('node:async_hooks').toolhostLeakReport;
if (report) report.file = expect.getState().testPath ?? report.file;
