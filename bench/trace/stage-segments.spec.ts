import type { RecordedStage } from './stage-recorder';
import { segmentMedians, stageTimes } from './stage-segments';

const row = (stage: string, id: string, atNs: number): RecordedStage => [stage, id, String(atNs)];

describe('stage segments', () => {
  it("keeps each invocation's first time at a stage, from every process's rows", () => {
    const times = stageTimes([
      row('gateway.enqueue', 'a', 1_000),
      row('executor.taken', 'a', 5_000),
      // A retried job is taken again: the hop is the first take's.
      row('executor.taken', 'a', 9_000),
      row('gateway.enqueue', 'b', 2_000),
    ]);
    expect(times.get('a')?.get('executor.taken')).toBe(5_000n);
    expect([...(times.get('b')?.keys() ?? [])]).toEqual(['gateway.enqueue']);
  });

  it('gives the median µs of a hop over the invocations that passed both of its ends', () => {
    const rows: RecordedStage[] = [];
    // Hops of 10, 30 and 20 µs; "d" never got to its second stage and does not count.
    [
      ['a', 10],
      ['b', 30],
      ['c', 20],
    ].forEach(([id, us], i) => {
      rows.push(row('gateway.enqueue', String(id), i * 100_000));
      rows.push(row('executor.taken', String(id), i * 100_000 + Number(us) * 1_000));
    });
    rows.push(row('gateway.enqueue', 'd', 900_000));
    const [queue, sandbox] = segmentMedians(stageTimes(rows), [
      { label: 'queue', from: 'gateway.enqueue', to: 'executor.taken' },
      { label: 'sandbox', from: 'executor.sandbox', to: 'executor.sandboxed' },
    ]);
    expect(queue).toEqual({ label: 'queue', calls: 3, medianUs: 20 });
    expect(sandbox?.calls).toBe(0);
    expect(sandbox?.medianUs).toBeNaN();
  });
});
