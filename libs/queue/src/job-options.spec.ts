import { MAX_PRIORITY, fairPriority, invocationJobOptions } from './job-options';

describe('fairPriority', () => {
  it("leaves a tenant's first unfinished job on the wait list (no priority), and ranks later ones by their place", () => {
    expect(fairPriority(0)).toEqual({});
    expect(fairPriority(1)).toEqual({});
    expect(fairPriority(2)).toEqual({ priority: 1 });
    expect(fairPriority(20_000)).toEqual({ priority: 19_999 });
  });

  it("caps the place at BullMQ's largest priority", () => {
    expect(fairPriority(MAX_PRIORITY + 10)).toEqual({ priority: MAX_PRIORITY });
    expect(MAX_PRIORITY).toBe(2 ** 21 - 1);
  });

  it('is part of the job options only when the job has a place behind others', () => {
    expect(invocationJobOptions('a')).not.toHaveProperty('priority');
    expect(invocationJobOptions('a', undefined, 5)).toMatchObject({ jobId: 'a', priority: 4 });
  });
});
