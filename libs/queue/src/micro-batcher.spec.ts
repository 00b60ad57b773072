import { MicroBatcher } from './micro-batcher';

describe('MicroBatcher', () => {
  it('writes items added in one turn as one batch', async () => {
    const batches: number[][] = [];
    const batcher = new MicroBatcher<number>(async (items) => {
      batches.push(items);
      await Promise.resolve();
    });
    await Promise.all([1, 2, 3].map((n) => batcher.add(n)));
    expect(batches).toEqual([[1, 2, 3]]);
  });

  it('gathers items while a write is in flight into the next batch', async () => {
    const batches: number[][] = [];
    let release: () => void = () => undefined;
    const batcher = new MicroBatcher<number>((items) => {
      batches.push(items);
      return batches.length === 1 ? new Promise<void>((r) => (release = r)) : Promise.resolve();
    });
    const first = batcher.add(1);
    await new Promise((r) => setImmediate(r));
    const later = [batcher.add(2), batcher.add(3)];
    release();
    await Promise.all([first, ...later]);
    expect(batches).toEqual([[1], [2, 3]]);
  });

  it('splits at maxBatch', async () => {
    const sizes: number[] = [];
    const batcher = new MicroBatcher<number>(
      (items) => {
        sizes.push(items.length);
        return Promise.resolve();
      },
      { maxBatch: 2 },
    );
    await Promise.all([1, 2, 3, 4, 5].map((n) => batcher.add(n)));
    expect(sizes).toEqual([2, 2, 1]);
  });

  it("with first: 'now', writes an item at once and gathers the rest of its turn behind it", async () => {
    const batches: number[][] = [];
    let release: () => void = () => undefined;
    const batcher = new MicroBatcher<number>(
      (items) => {
        batches.push(items);
        return batches.length === 1 ? new Promise<void>((r) => (release = r)) : Promise.resolve();
      },
      { first: 'now' },
    );
    const first = batcher.add(1);
    // Written before add returned, with nothing else.
    expect(batches).toEqual([[1]]);
    const later = [batcher.add(2), batcher.add(3)];
    release();
    await Promise.all([first, ...later]);
    expect(batches).toEqual([[1], [2, 3]]);
  });

  it('rejects every item of a failed batch and keeps working', async () => {
    let fail = true;
    const batcher = new MicroBatcher<number>(() => (fail ? Promise.reject(new Error('down')) : Promise.resolve()));
    await expect(Promise.all([batcher.add(1), batcher.add(2)])).rejects.toThrow('down');
    fail = false;
    await expect(batcher.add(3)).resolves.toBeUndefined();
    await batcher.drain();
  });

  it('gives the waiting items to a writer that takes them, and writes none of them itself', async () => {
    const batches: number[][] = [];
    const batcher = new MicroBatcher<number>(async (items) => {
      batches.push(items);
      await Promise.resolve();
    });
    const added = [batcher.add(1), batcher.add(2)];
    expect(batcher.waiting).toBe(true);
    const taken = batcher.take();
    expect(taken?.items).toEqual([1, 2]);
    expect(batcher.waiting).toBe(false);
    expect(batcher.take()).toBeUndefined();
    let drained = false;
    const draining = batcher.drain().then(() => (drained = true));
    await new Promise((r) => setImmediate(r));
    // Its turn ended with nothing left to write, and the taken items are not settled yet.
    expect(batches).toEqual([]);
    expect(drained).toBe(false);
    taken?.done();
    await expect(Promise.all(added)).resolves.toEqual([undefined, undefined]);
    await draining;
    await expect(batcher.add(3)).resolves.toBeUndefined();
    expect(batches).toEqual([[3]]);
  });

  it('rejects taken items their writer failed, once, and takes no more than maxBatch', async () => {
    const batcher = new MicroBatcher<number>(() => Promise.resolve(), { maxBatch: 2 });
    const added = [1, 2, 3].map((n) => batcher.add(n));
    const taken = batcher.take();
    expect(taken?.items).toEqual([1, 2]);
    taken?.fail(new Error('lost'));
    taken?.done();
    await expect(added[0]).rejects.toThrow('lost');
    await expect(added[1]).rejects.toThrow('lost');
    // The third is written by the batcher on its turn.
    await expect(added[2]).resolves.toBeUndefined();
    await batcher.drain();
  });
});
