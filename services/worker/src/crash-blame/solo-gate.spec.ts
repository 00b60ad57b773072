import { SoloGate } from './solo-gate';

/** A run that goes until `finish()` is called, recording when it started. */
function controlled(log: string[], name: string): { run: () => Promise<string>; finish: () => void } {
  let finish!: () => void;
  const done = new Promise<void>((resolve) => (finish = resolve));
  return {
    run: async () => {
      log.push(`start ${name}`);
      await done;
      log.push(`end ${name}`);
      return name;
    },
    finish: () => finish(),
  };
}

const turns = async (n = 5): Promise<void> => {
  for (let i = 0; i < n; i += 1) await new Promise((resolve) => setImmediate(resolve));
};

describe('SoloGate', () => {
  it('runs shared runs side by side', async () => {
    const gate = new SoloGate();
    const log: string[] = [];
    const a = controlled(log, 'a');
    const b = controlled(log, 'b');
    const runs = [gate.shared(a.run), gate.shared(b.run)];
    await turns();
    expect(log).toEqual(['start a', 'start b']);
    expect(gate.shareCount).toBe(2);
    a.finish();
    b.finish();
    expect(await Promise.all(runs)).toEqual(['a', 'b']);
    expect(gate.shareCount).toBe(0);
  });

  it('starts a solo run once the runs going have ended, and holds later runs until it has', async () => {
    const gate = new SoloGate();
    const log: string[] = [];
    const first = controlled(log, 'first');
    const solo = controlled(log, 'solo');
    const later = controlled(log, 'later');
    const runs = [gate.shared(first.run), gate.alone(solo.run)];
    await turns();
    runs.push(gate.shared(later.run));
    await turns();
    // The solo run waits for the one going; the later one waits for the solo run, without starting.
    expect(log).toEqual(['start first']);
    expect(gate.soloPending).toBe(true);

    first.finish();
    await turns();
    expect(log).toEqual(['start first', 'end first', 'start solo']);

    solo.finish();
    await turns();
    expect(log).toEqual(['start first', 'end first', 'start solo', 'end solo', 'start later']);
    expect(gate.soloPending).toBe(false);
    later.finish();
    expect(await Promise.all(runs)).toEqual(['first', 'solo', 'later']);
  });

  it('runs solo runs one at a time, and opens again when a solo run throws', async () => {
    const gate = new SoloGate();
    const log: string[] = [];
    const one = controlled(log, 'one');
    const failing = gate.alone(async () => {
      log.push('start failing');
      await turns(1);
      throw new Error('no registry');
    });
    const runs = [gate.alone(one.run), gate.shared(() => Promise.resolve((log.push('shared'), 'shared')))];
    await expect(failing).rejects.toThrow('no registry');
    await turns();
    expect(log).toEqual(['start failing', 'start one']);
    one.finish();
    expect(await Promise.all(runs)).toEqual(['one', 'shared']);
    expect(log).toEqual(['start failing', 'start one', 'end one', 'shared']);
  });

  it('starts a solo run at once when nothing is going', async () => {
    const gate = new SoloGate();
    expect(await gate.alone(() => Promise.resolve('alone'))).toBe('alone');
    expect(await gate.shared(() => Promise.resolve('after'))).toBe('after');
  });
});
