import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { OutcomeJob } from '@toolhost/queue';
import { projectRoot } from '../../../../scripts/project-root';
import { OutcomeWriteError } from './outcome-write.error';
import { OutcomeWrites, type OutcomeSink } from './outcome-writes';

const outcome = (invocationId: string): OutcomeJob => ({
  v: 1,
  invocationId,
  tenantId: 't',
  toolId: 'tool',
  version: 1,
  status: 'succeeded',
  durationMs: 1,
  context: {},
  inputSha256: 'x',
  audit: [],
  startedAt: new Date(0).toISOString(),
  finishedAt: new Date(0).toISOString(),
});

describe('OutcomeWrites', () => {
  it('settles only once the nested runs it tracks have ended, with their outcomes', async () => {
    const written: string[] = [];
    const writes = new OutcomeWrites({
      publish: (o) => {
        written.push(o.invocationId);
        return Promise.resolve();
      },
    });
    writes.add(outcome('root'));
    let endNested: () => void = () => undefined;
    // A nested run still going when the root ended (its caller stopped waiting for it).
    void writes.track(
      new Promise<void>((resolve) => {
        endNested = () => {
          writes.add(outcome('nested'));
          resolve();
        };
      }),
    );
    let settled = false;
    const settling = writes.settle().then(() => (settled = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(settled).toBe(false);
    endNested();
    await settling;
    expect(written).toEqual(['root', 'nested']);
  });

  it('settles once every write is durable, and writes only the failed ones again on the next settle', async () => {
    const calls: string[] = [];
    let down = new Set(['b', 'c']);
    const sink: OutcomeSink = {
      publish: (o) => {
        calls.push(o.invocationId);
        return down.has(o.invocationId) ? Promise.reject(new Error('Redis went away')) : Promise.resolve();
      },
    };
    const writes = new OutcomeWrites(sink);
    for (const id of ['a', 'b', 'c']) writes.add(outcome(id));

    await expect(writes.settle()).rejects.toEqual(expect.any(OutcomeWriteError));
    down = new Set(['c']);
    await expect(writes.settle()).rejects.toMatchObject({ unwritten: 1, message: expect.stringMatching(/went away/) });
    down = new Set();
    await writes.settle();
    await writes.settle();
    expect(calls).toEqual(['a', 'b', 'c', 'b', 'c', 'c']);
  });

  it('takes a sink that throws instead of rejecting', async () => {
    const writes = new OutcomeWrites({
      publish: () => {
        throw new Error('no connection');
      },
    });
    writes.add(outcome('a'));
    await expect(writes.settle()).rejects.toMatchObject({ unwritten: 1 });
  });

  // Jest forgives a rejection handled late; Node 20 does not: it ends the process when a rejection has no handler
  // once the microtasks have run. So this runs in a plain Node process, on the compiled class (jest's global setup
  // builds dist/): a write that fails while nothing awaits it (a nested run's outcome while its caller still runs,
  // or a job that fails before it settles) must not end the process.
  it('never leaves a failed write as an unhandled rejection, even when nothing settles it', async () => {
    const compiled = join(projectRoot(__dirname), 'dist', 'services', 'worker', 'src', 'run', 'outcome-writes.js');
    const script = `
      const { OutcomeWrites } = require(${JSON.stringify(compiled)});
      const writes = new OutcomeWrites({ publish: () => Promise.reject(new Error('Redis went away')) });
      writes.add({ invocationId: 'a' });
      setTimeout(() => {
        writes.add({ invocationId: 'b' });
        setTimeout(() => console.log('still running'), 50);
      }, 50);
    `;
    const { stdout, stderr } = await promisify(execFile)(process.execPath, ['-e', script], { timeout: 10_000 });
    expect(stderr).toBe('');
    expect(stdout.trim()).toBe('still running');
  });
});
