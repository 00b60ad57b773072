import { StartedRuns } from './started-runs';

describe('StartedRuns', () => {
  it('announces a held job once, when its code first enters an isolate, and forgets it once settled', () => {
    const announced: string[] = [];
    const runs = new StartedRuns((jobId) => announced.push(jobId));
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
    expect(runs.list()).toEqual([]);
    runs.entered('a');
    expect(announced).toEqual(['a']);
  });
});
