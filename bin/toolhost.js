#!/usr/bin/env node
// `npx toolhost …`: the CLI, from the build (`npm run build` writes dist/).
void require('../dist/services/cli/src/main.js').main(process.argv.slice(2));
