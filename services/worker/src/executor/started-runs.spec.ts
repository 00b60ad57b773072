import { StartedRuns } from './started-runs';

describe('StartedRuns', () => {
  it('logs a held job started once, when its code first enters an isolate, and ended once settled', () => {
    const announced: string[] = [];
    const ended: string[] = [];
    const runs = new StartedRuns({ started: (jobId) => announced.push(jobId), ended: (jobId) => ended.push(jobId) });
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

    runs.settled('a');
    // 'b' never started: its end is not logged.
    runs.settled('b');
    expect(runs.list()).toEqual([]);
    expect(ended).toEqual(['a']);
    runs.entered('a');
    expect(announced).toEqual(['a']);
  });
});
