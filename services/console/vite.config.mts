// The console's build: a static single-page app under /console, written to dist/console, which the registry serves.
import preact from '@preact/preset-vite';
import Ajv2020 from 'ajv/dist/2020.js';
import standaloneCode from 'ajv/dist/standalone/index.js';
import { fileURLToPath } from 'node:url';
import { defineConfig, type Plugin } from 'vite';

const here = fileURLToPath(new URL('.', import.meta.url));
const META_VALIDATOR = 'virtual:json-schema-meta-validator';
const META_SCHEMA = 'https://json-schema.org/draft/2020-12/schema';

/**
 * The JSON Schema 2020-12 meta-schema validator, compiled by ajv here at build time into plain code: ajv compiles
 * validators with `new Function`, which the console's Content-Security-Policy (no 'unsafe-eval') refuses in the page.
 * The one runtime helper the code requires is ajv's deep equality, which is fast-deep-equal.
 */
function metaSchemaValidator(): Plugin {
  return {
    name: 'json-schema-meta-validator',
    resolveId: (source) => (source === META_VALIDATOR ? `\0${META_VALIDATOR}` : null),
    load(id) {
      if (id !== `\0${META_VALIDATOR}`) return null;
      const ajv = new Ajv2020({ strict: false, validateFormats: false, code: { source: true, esm: true } });
      const validate = ajv.getSchema(META_SCHEMA);
      if (!validate) throw new Error(`ajv has no ${META_SCHEMA}`);
      const code = standaloneCode(ajv, validate).replaceAll('require("ajv/dist/runtime/equal").default', 'deepEqual');
      if (code.includes('require(')) throw new Error('the meta-schema validator requires a runtime helper not mapped');
      return `import deepEqual from 'fast-deep-equal';\n${code}`;
    },
  };
}

export default defineConfig({
  root: here,
  base: '/console/',
  plugins: [preact(), metaSchemaValidator()],
  build: {
    outDir: fileURLToPath(new URL('../../dist/console', import.meta.url)),
    emptyOutDir: true,
    // CodeMirror is most of the bundle; one file loads faster here than many small requests.
    chunkSizeWarningLimit: 1500,
  },
  logLevel: 'warn',
});
