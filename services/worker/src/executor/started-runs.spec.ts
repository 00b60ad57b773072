import { StartedRuns } from './started-runs';

describe('StartedRuns', () => {
  it('logs a held job started once, when its code first enters an isolate, and ended once settled', () => {
    const announced: string[] = [];
    const ended: string[] = [];
    const runs = new StartedRuns({
      started: (jobId) => announced.push(jobId),
      ended: (jobId, lazily) => ended.push(`${jobId}${lazily ? ' (lazily)' : ''}`),
    });
    runs.taken('a');
    runs.taken('b');
    expect(runs.list()).toEqual([]);

    runs.entered('a');
    runs.entered('a');
    // A nested run's id is no job of this executor's.
    runs.entered('nested');
    expect(announced).toEqual(['a']);
    // 'b' is held but waits its turn: not started.
    expect(runs.list()).toEqual(['a']);

    runs.settled('a', true);
    // 'b' never started: its end is not logged.
    runs.settled('b', true);
    expect(runs.list()).toEqual([]);
    expect(ended).toEqual(['a (lazily)']);
    runs.entered('a');
    expect(announced).toEqual(['a']);
  });

  it('logs the end of a run that was not answered (its handler threw) at once', () => {
    const ended: string[] = [];
    const runs = new StartedRuns({
      started: () => undefined,
      ended: (jobId, lazily) => ended.push(`${jobId}${lazily ? ' (lazily)' : ''}`),
    });
    runs.taken('a');
    runs.entered('a');
    runs.settled('a', false);
    expect(ended).toEqual(['a']);
    expect(runs.list()).toEqual([]);
  });
});
