import { McpCancellations } from './mcp-cancellations';

function fanOut(): { published: string[]; publish: (message: string) => Promise<void> } {
  const published: string[] = [];
  return {
    published,
    publish: (message) => {
      published.push(message);
      return Promise.resolve();
    },
  };
}

describe('McpCancellations', () => {
  it('cancels a call of this gateway by session and request id, once, without publishing', () => {
    const out = fanOut();
    const cancellations = new McpCancellations(out);
    const cancelled: string[] = [];
    cancellations.track('s1', 7, 'k1', () => cancelled.push('s1/7'));
    cancellations.track('s2', 7, 'k1', () => cancelled.push('s2/7'));
    cancellations.cancel({ sessionId: 's1', requestId: 7, keyId: 'k1' });
    expect(cancelled).toEqual(['s1/7']);
    expect(out.published).toEqual([]);
    expect(cancellations.size).toBe(1);
  });

  it('passes on what it does not serve, and ends it when another gateway passes it on', () => {
    const out = fanOut();
    const here = new McpCancellations(out);
    const there = new McpCancellations(fanOut());
    let cancelled = 0;
    there.track('s1', 'req-1', 'k1', () => (cancelled += 1));
    here.cancel({ sessionId: 's1', requestId: 'req-1', keyId: 'k1' });
    expect(out.published).toHaveLength(1);
    there.handleMessage(out.published[0] ?? '');
    expect(cancelled).toBe(1);
    expect(there.size).toBe(0);
  });

  it('lets only the key that made a call cancel it, and tells 1 from "1"', () => {
    const cancellations = new McpCancellations(fanOut());
    let cancelled = 0;
    cancellations.track('s1', 1, 'k1', () => (cancelled += 1));
    cancellations.cancel({ sessionId: 's1', requestId: 1, keyId: 'another key' });
    cancellations.cancel({ sessionId: 's1', requestId: '1', keyId: 'k1' });
    cancellations.handleMessage('not json');
    cancellations.handleMessage(JSON.stringify({ sessionId: 's1', requestId: { id: 1 }, keyId: 'k1' }));
    expect(cancelled).toBe(0);
    cancellations.cancel({ sessionId: 's1', requestId: 1, keyId: 'k1' });
    expect(cancelled).toBe(1);
  });

  it('forgets a call that ended, and a later one with the same ids is its own', () => {
    const cancellations = new McpCancellations(fanOut());
    const cancelled: string[] = [];
    const untrackFirst = cancellations.track('s1', 1, 'k1', () => cancelled.push('first'));
    untrackFirst();
    const untrackSecond = cancellations.track('s1', 1, 'k1', () => cancelled.push('second'));
    untrackFirst();
    expect(cancellations.size).toBe(1);
    cancellations.cancel({ sessionId: 's1', requestId: 1, keyId: 'k1' });
    expect(cancelled).toEqual(['second']);
    untrackSecond();
  });

  it('reports a cancellation it could not pass on', async () => {
    const errors: unknown[] = [];
    const cancellations = new McpCancellations({ publish: () => Promise.reject(new Error('redis down')) }, (error) =>
      errors.push(error),
    );
    cancellations.cancel({ sessionId: 's1', requestId: 1, keyId: 'k1' });
    await new Promise((resolve) => setImmediate(resolve));
    expect(errors).toEqual([new Error('redis down')]);
  });
});
