/**
 * The e2e benchmark's naive worker (`bench/e2e.bench.ts`): the production supervisor, forking the naive executor
 * (naive-executor.main.ts) instead of the production one. Everything else (queue, crash recovery, metrics) is the
 * production code.
 */
import { join } from 'node:path';
import { serveWorker } from '../../services/worker/src';

serveWorker({ executorEntry: join(__dirname, 'naive-executor.main.js') });
