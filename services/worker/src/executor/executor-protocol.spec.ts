import { parseExecutorMessage, parseSupervisorMessage } from './executor-protocol';

describe('executor protocol', () => {
  it('accepts well-formed executor messages', () => {
    expect(parseExecutorMessage({ type: 'consuming', workerId: 'w-1' })).toEqual({
      type: 'consuming',
      workerId: 'w-1',
    });
    expect(parseExecutorMessage({ type: 'heartbeat', rssBytes: 10, inFlight: 0, runs: 3 })).toEqual({
      type: 'heartbeat',
      rssBytes: 10,
      inFlight: 0,
      runs: 3,
    });
    expect(parseExecutorMessage({ type: 'metrics', requestId: 7, metrics: [] })).toEqual({
      type: 'metrics',
      requestId: 7,
      metrics: [],
    });
    expect(parseExecutorMessage({ type: 'retiring', reason: '3 runs' })).toEqual({
      type: 'retiring',
      reason: '3 runs',
    });
  });

  it.each([
    ['not an object', 'consuming'],
    ['null', null],
    ['an unknown type', { type: 'run' }],
    ['an empty worker id', { type: 'consuming', workerId: '' }],
    ['a heartbeat with a negative count', { type: 'heartbeat', rssBytes: 1, inFlight: -1, runs: 0 }],
    ['a heartbeat with a non-number', { type: 'heartbeat', rssBytes: '1', inFlight: 0, runs: 0 }],
    ['metrics without an integer request id', { type: 'metrics', requestId: 1.5, metrics: [] }],
    ['metrics that are not a list', { type: 'metrics', requestId: 1, metrics: {} }],
  ])('drops %s', (_what, message) => {
    expect(parseExecutorMessage(message)).toBeUndefined();
  });

  it('parses supervisor messages and drops anything else', () => {
    expect(parseSupervisorMessage({ type: 'drain' })).toEqual({ type: 'drain' });
    expect(parseSupervisorMessage({ type: 'metrics', requestId: 2 })).toEqual({ type: 'metrics', requestId: 2 });
    expect(parseSupervisorMessage({ type: 'metrics' })).toBeUndefined();
    expect(parseSupervisorMessage({ type: 'run' })).toBeUndefined();
    expect(parseSupervisorMessage(undefined)).toBeUndefined();
  });
});
