import { LruCache } from './lru-cache';

describe('LruCache', () => {
  it('evicts the least recently used entry', () => {
    const cache = new LruCache<string, number>(2);
    cache.set('a', 1);
    cache.set('b', 2);
    expect(cache.get('a')).toBe(1);
    cache.set('c', 3);
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')).toBe(1);
    expect(cache.get('c')).toBe(3);
  });

  it('expires entries after the ttl', () => {
    const now = jest.spyOn(Date, 'now').mockReturnValue(1_000);
    const cache = new LruCache<string, number>(10, 100);
    cache.set('a', 1);
    now.mockReturnValue(1_099);
    expect(cache.get('a')).toBe(1);
    now.mockReturnValue(1_100);
    expect(cache.get('a')).toBeUndefined();
    now.mockRestore();
  });

  it('loads a missing key once for concurrent callers', async () => {
    const cache = new LruCache<string, number>(10);
    let loads = 0;
    const load = async (): Promise<number> => {
      loads += 1;
      await Promise.resolve();
      return 42;
    };
    const values = await Promise.all([cache.getOrLoad('k', load), cache.getOrLoad('k', load)]);
    expect(values).toEqual([42, 42]);
    expect(loads).toBe(1);
    expect(await cache.getOrLoad('k', load)).toBe(42);
    expect(loads).toBe(1);
  });

  it('does not cache a value whose key was deleted while it loaded', async () => {
    const cache = new LruCache<string, number>(10);
    let release: (v: number) => void = () => undefined;
    const pending = cache.getOrLoad('k', () => new Promise<number>((r) => (release = r)));
    cache.delete('k');
    release(1);
    expect(await pending).toBe(1);
    expect(cache.get('k')).toBeUndefined();
  });

  describe('with a stale window', () => {
    let now: jest.SpyInstance<number, []>;
    beforeEach(() => {
      now = jest.spyOn(Date, 'now').mockReturnValue(1_000);
    });
    afterEach(() => now.mockRestore());

    it('answers a stale value at once and replaces it with one background reload', async () => {
      const cache = new LruCache<string, number>(10, 100, 1_000);
      cache.set('k', 1);
      now.mockReturnValue(1_200);
      expect(cache.get('k')).toBeUndefined();
      let release: (v: number) => void = () => undefined;
      let loads = 0;
      const load = (): Promise<number> => {
        loads += 1;
        return new Promise<number>((resolve) => (release = resolve));
      };
      expect(await cache.getOrLoad('k', load)).toBe(1);
      expect(await cache.getOrLoad('k', load)).toBe(1);
      expect(loads).toBe(1);
      release(2);
      await new Promise((resolve) => setImmediate(resolve));
      expect(cache.get('k')).toBe(2);
    });

    it('keeps the stale value when the reload fails, until the window ends', async () => {
      const cache = new LruCache<string, number>(10, 100, 1_000);
      cache.set('k', 1);
      now.mockReturnValue(1_500);
      const failing = (): Promise<number> => Promise.reject(new Error('source unreachable'));
      expect(await cache.getOrLoad('k', failing)).toBe(1);
      await new Promise((resolve) => setImmediate(resolve));
      expect(await cache.getOrLoad('k', failing)).toBe(1);
      now.mockReturnValue(2_100);
      await expect(cache.getOrLoad('k', failing)).rejects.toThrow('source unreachable');
    });

    it('after a failed reload, answers the stale value for a second without asking the source again', async () => {
      const cache = new LruCache<string, number>(10, 100, 5_000);
      cache.set('k', 1);
      now.mockReturnValue(1_200);
      let loads = 0;
      const failing = (): Promise<number> => {
        loads += 1;
        return Promise.reject(new Error('source unreachable'));
      };
      expect(await cache.getOrLoad('k', failing)).toBe(1);
      await new Promise((resolve) => setImmediate(resolve));
      for (let i = 0; i < 50; i += 1) expect(await cache.getOrLoad('k', failing)).toBe(1);
      expect(loads).toBe(1);
      now.mockReturnValue(2_200);
      expect(await cache.getOrLoad('k', () => Promise.resolve(2))).toBe(1);
      await new Promise((resolve) => setImmediate(resolve));
      expect(cache.get('k')).toBe(2);
    });

    it('drops the entry when the reload finds nothing', async () => {
      const cache = new LruCache<string, number | undefined>(10, 100, 1_000);
      cache.set('k', 1);
      now.mockReturnValue(1_200);
      expect(await cache.getOrLoad('k', () => Promise.resolve(undefined))).toBe(1);
      await new Promise((resolve) => setImmediate(resolve));
      expect(await cache.getOrLoad('k', () => Promise.resolve(3))).toBe(3);
    });

    it('never answers stale without a window', async () => {
      const cache = new LruCache<string, number>(10, 100);
      cache.set('k', 1);
      now.mockReturnValue(1_100);
      expect(await cache.getOrLoad('k', () => Promise.resolve(2))).toBe(2);
    });
  });
});

describe('LruCache bounds', () => {
  it('never holds more than its size, dropping the least recently used first', () => {
    const cache = new LruCache<string, number>(3);
    for (let i = 0; i < 100; i += 1) {
      cache.set(`k${i}`, i);
      expect(cache.get('k0')).toBe(0); // used after every insert, so never the one dropped
    }
    expect(cache.size).toBe(3);
    expect(cache.get('k99')).toBe(99);
    expect(cache.get('k98')).toBe(98);
    expect(cache.get('k97')).toBeUndefined();
  });

  it('does not count a stale answer as a use', async () => {
    const now = jest.spyOn(Date, 'now').mockReturnValue(1_000);
    try {
      const cache = new LruCache<string, number>(2, 100, 1_000);
      cache.set('old', 1);
      now.mockReturnValue(1_050);
      cache.set('new', 2);
      now.mockReturnValue(1_120);
      // 'old' is stale: answered, reloaded in the background, but still the least recently used.
      expect(await cache.getOrLoad('old', () => new Promise<number>(() => undefined))).toBe(1);
      cache.set('third', 3);
      expect(cache.get('new')).toBe(2);
      expect(cache.get('old')).toBeUndefined();
    } finally {
      now.mockRestore();
    }
  });
});
