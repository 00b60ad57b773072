// The console's build: a static single-page app under /console, written to dist/console, which the registry serves.
import preact from '@preact/preset-vite';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root: here,
  base: '/console/',
  plugins: [preact()],
  build: {
    outDir: fileURLToPath(new URL('../../dist/console', import.meta.url)),
    emptyOutDir: true,
    // CodeMirror and ajv are most of the bundle; one file loads faster here than many small requests.
    chunkSizeWarningLimit: 1500,
  },
  logLevel: 'warn',
});
