import { InFlight } from './in-flight';

describe('InFlight', () => {
  it('is idle at once with nothing in flight, and once everything it tracks has settled', async () => {
    const inFlight = new InFlight();
    await inFlight.idle();
    let finish!: (value: string) => void;
    let fail!: (error: Error) => void;
    const ok = inFlight.track(new Promise<string>((resolve) => (finish = resolve)));
    const failing = inFlight.track(new Promise<string>((_resolve, reject) => (fail = reject)));
    expect(inFlight.count).toBe(2);
    let idle = false;
    const waited = inFlight.idle().then(() => (idle = true));
    finish('done');
    expect(await ok).toBe('done');
    expect(idle).toBe(false);
    fail(new Error('no'));
    await expect(failing).rejects.toThrow('no');
    await waited;
    expect(idle).toBe(true);
    expect(inFlight.count).toBe(0);
  });
});
