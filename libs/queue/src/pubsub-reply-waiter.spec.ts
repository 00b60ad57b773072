import type { Invocation } from '@toolhost/contracts';
import type { ReplyWaiterMetrics } from './reply-waiter';
import { PubSubReplyWaiter } from './pubsub-reply-waiter';
import { LOST } from './reply-waiter';

const metrics = { setWaiters: jest.fn() } as unknown as ReplyWaiterMetrics;
const invocation = (id: string): Invocation => ({ id, tool: 'custom_t', toolId: 't', version: 1, status: 'succeeded' });
const reply = (id: string): string => JSON.stringify({ invocationId: id, invocation: invocation(id) });

describe('PubSubReplyWaiter', () => {
  let waiter: PubSubReplyWaiter;
  beforeEach(() => {
    waiter = new PubSubReplyWaiter('toolhost:replies:x', metrics, 60_000);
  });
  afterEach(() => waiter.close());

  it('resolves a waiting request with its reply and runs onFinished once', async () => {
    const finished = jest.fn();
    const pending = waiter.expect('a', finished);
    const result = pending.result(10_000);
    waiter.handleMessage(reply('a'));
    waiter.handleMessage(reply('a'));
    expect(await result).toEqual(invocation('a'));
    expect(finished).toHaveBeenCalledTimes(1);
    expect(waiter.size).toBe(0);
  });

  it('keeps a reply that arrives before anybody waits', async () => {
    const finished = jest.fn();
    const pending = waiter.expect('b', finished);
    waiter.handleMessage(reply('b'));
    expect(await pending.result(10_000)).toEqual(invocation('b'));
    expect(finished).toHaveBeenCalledTimes(1);
  });

  it('answers undefined on timeout, and still releases when the late reply comes', async () => {
    const finished = jest.fn();
    const pending = waiter.expect('c', finished);
    expect(await pending.result(1)).toBeUndefined();
    expect(finished).not.toHaveBeenCalled();
    waiter.handleMessage(reply('c'));
    expect(finished).toHaveBeenCalledTimes(1);
    expect(waiter.size).toBe(0);
  });

  it('answers undefined when the caller stops waiting (signal), and still releases when the reply comes', async () => {
    const finished = jest.fn();
    const abort = new AbortController();
    const result = waiter.expect('s', finished).result(60_000, abort.signal);
    abort.abort();
    expect(await result).toBeUndefined();
    expect(finished).not.toHaveBeenCalled();
    waiter.handleMessage(reply('s'));
    expect(finished).toHaveBeenCalledTimes(1);
    expect(waiter.size).toBe(0);
    // A signal aborted before the wait starts does not wait at all.
    const already = waiter.expect('t', jest.fn()).result(60_000, AbortSignal.abort());
    expect(await already).toBeUndefined();
  });

  it('releases detached (wait: false) invocations on their reply', () => {
    const finished = jest.fn();
    waiter.expect('d', finished).detach();
    waiter.handleMessage(reply('d'));
    expect(finished).toHaveBeenCalledTimes(1);
    expect(waiter.size).toBe(0);
  });

  it('ignores unknown ids, garbage and cancelled waiters', () => {
    const finished = jest.fn();
    waiter.expect('e', finished).cancel();
    waiter.handleMessage(reply('e'));
    waiter.handleMessage('not json');
    waiter.handleMessage(JSON.stringify({ invocationId: 'e' }));
    expect(finished).not.toHaveBeenCalled();
  });

  it('delivers invocations that finished while the subscriber was away (resync)', async () => {
    const waiting = waiter.expect('h', jest.fn()).result(60_000);
    const detachedFinished = jest.fn();
    waiter.expect('i', detachedFinished).detach();
    const stillRunning = jest.fn();
    waiter.expect('j', stillRunning).detach();
    await waiter.resync((id) => Promise.resolve(id === 'j' ? undefined : invocation(id)));
    expect(await waiting).toEqual(invocation('h'));
    expect(detachedFinished).toHaveBeenCalledTimes(1);
    expect(stillRunning).not.toHaveBeenCalled();
    expect(waiter.size).toBe(1);
  });

  it('ends the wait of a confirmed invocation whose job Redis lost with LOST at the resync, releasing its slot', async () => {
    const finished = jest.fn();
    const pending = waiter.expect('m', finished);
    pending.enqueued();
    const waiting = pending.result(60_000);
    const detachedFinished = jest.fn();
    const detached = waiter.expect('n', detachedFinished);
    detached.enqueued();
    detached.detach();
    await waiter.resync(() => Promise.resolve(LOST));
    expect(await waiting).toBe(LOST);
    expect(finished).toHaveBeenCalledTimes(1);
    expect(detachedFinished).toHaveBeenCalledTimes(1);
    expect(waiter.size).toBe(0);
  });

  it('leaves alone a job found missing whose add was not confirmed before the read went out', async () => {
    const notYet = jest.fn();
    const pending = waiter.expect('o', notYet);
    const waiting = pending.result(60_000);
    const racing = jest.fn();
    const raced = waiter.expect('p', racing);
    // The add of `p` is confirmed while its read is on its way: the read may have run before the add did.
    await waiter.resync((id) => {
      if (id === 'p') raced.enqueued();
      return Promise.resolve(LOST);
    });
    expect(notYet).not.toHaveBeenCalled();
    expect(racing).not.toHaveBeenCalled();
    expect(waiter.size).toBe(2);
    waiter.handleMessage(reply('o'));
    expect(await waiting).toEqual(invocation('o'));
  });

  it('reads again, on later passes, the jobs whose read failed during a resync', async () => {
    const waiting = waiter.expect('k', jest.fn()).result(60_000);
    const detached = jest.fn();
    waiter.expect('l', detached).detach();
    const reads: string[] = [];
    // The producer connection is not back on the first pass: every read fails; on the second only one does.
    await waiter.resync(
      (id) => {
        reads.push(id);
        if (reads.length <= 2 || id === 'l') return Promise.reject(new Error('redis is reconnecting'));
        return Promise.resolve(invocation(id));
      },
      { retryMs: 1, attempts: 4 },
    );
    expect(await waiting).toEqual(invocation('k'));
    expect(reads.filter((id) => id === 'k')).toHaveLength(2);
    // A read that keeps failing stops after the last pass; the entry stays for its reply or the sweep.
    expect(reads.filter((id) => id === 'l')).toHaveLength(4);
    expect(detached).not.toHaveBeenCalled();
    expect(waiter.size).toBe(1);
  });

  it('answers every waiter on drain, and later waits at once', async () => {
    const pending = waiter.expect('f', jest.fn()).result(60_000);
    await waiter.drain(0);
    expect(await pending).toBeUndefined();
    expect(await waiter.expect('g', jest.fn()).result(60_000)).toBeUndefined();
  });
});
