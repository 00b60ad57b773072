import { parseExecutorMessage, parseSupervisorMessage } from './executor-protocol';

describe('executor protocol', () => {
  it('accepts well-formed executor messages', () => {
    expect(parseExecutorMessage({ type: 'consuming', workerId: 'w-1' })).toEqual({
      type: 'consuming',
      workerId: 'w-1',
    });
    expect(parseExecutorMessage({ type: 'heartbeat', rssBytes: 10, metrics: [] })).toEqual({
      type: 'heartbeat',
      rssBytes: 10,
      metrics: [],
    });
    expect(parseExecutorMessage({ type: 'retiring', reason: '3 runs' })).toEqual({
      type: 'retiring',
      reason: '3 runs',
    });
    expect(parseExecutorMessage({ type: 'solo', jobId: 'inv-1' })).toEqual({ type: 'solo', jobId: 'inv-1' });
    expect(parseExecutorMessage({ type: 'solo-end', jobId: 'inv-1' })).toEqual({ type: 'solo-end', jobId: 'inv-1' });
  });

  it.each([
    ['not an object', 'consuming'],
    ['null', null],
    ['an unknown type', { type: 'run' }],
    ['an empty worker id', { type: 'consuming', workerId: '' }],
    ['a heartbeat with a negative size', { type: 'heartbeat', rssBytes: -1, metrics: [] }],
    ['a heartbeat with a non-number', { type: 'heartbeat', rssBytes: '1', metrics: [] }],
    ['a heartbeat whose metrics are not a list', { type: 'heartbeat', rssBytes: 1, metrics: {} }],
    ['a heartbeat without metrics', { type: 'heartbeat', rssBytes: 1 }],
    ['a solo run without a job', { type: 'solo' }],
    ['a solo end with a numeric job id', { type: 'solo-end', jobId: 7 }],
  ])('drops %s', (_what, message) => {
    expect(parseExecutorMessage(message)).toBeUndefined();
  });

  it("parses a heartbeat's list of started jobs (dropping what is not an id), and no per-run start message", () => {
    expect(parseExecutorMessage({ type: 'started', jobId: 'inv-1' })).toBeUndefined();
    expect(parseExecutorMessage({ type: 'heartbeat', rssBytes: 1, metrics: [], started: ['a', 7, 'b'] })).toEqual({
      type: 'heartbeat',
      rssBytes: 1,
      metrics: [],
      started: ['a', 'b'],
    });
  });

  it('parses an overrun report, and refuses one with a code other than a limit', () => {
    const report = { type: 'overrun', invocationId: 'i-1', toolId: 't-1', version: 2, code: 'TIMEOUT', reason: 'r' };
    expect(parseExecutorMessage(report)).toEqual(report);
    expect(parseExecutorMessage({ ...report, code: 'SANDBOX_CRASH' })).toBeUndefined();
    expect(parseExecutorMessage({ ...report, version: '2' })).toBeUndefined();
  });

  it('parses supervisor messages and drops anything else', () => {
    expect(parseSupervisorMessage({ type: 'drain' })).toEqual({ type: 'drain' });
    // A promoted standby is told its share of the worker's concurrency.
    expect(parseSupervisorMessage({ type: 'consume', concurrency: 21 })).toEqual({ type: 'consume', concurrency: 21 });
    expect(parseSupervisorMessage({ type: 'consume' })).toBeUndefined();
    expect(parseSupervisorMessage({ type: 'metrics', requestId: 2 })).toBeUndefined();
    expect(parseSupervisorMessage({ type: 'run' })).toBeUndefined();
    expect(parseSupervisorMessage(undefined)).toBeUndefined();
  });
});
