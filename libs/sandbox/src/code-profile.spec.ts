import { CodeProfile } from './code-profile';

describe('CodeProfile', () => {
  it('is trusted after three fast runs, the first one not judged', () => {
    const profile = new CodeProfile();
    profile.recordEntry(40);
    profile.recordRun(40);
    profile.recordRun(1);
    expect(profile.trusted).toBe(false);
    profile.recordRun(1);
    expect(profile.trusted).toBe(true);
  });

  it('forgives one slow entry, and loses trust for good at the second', () => {
    const profile = new CodeProfile();
    for (let i = 0; i < 5; i += 1) profile.recordRun(1);
    profile.recordEntry(50);
    expect(profile.trusted).toBe(true);
    profile.recordEntry(50);
    expect(profile.trusted).toBe(false);
    for (let i = 0; i < 5; i += 1) profile.recordRun(1);
    expect(profile.trusted).toBe(false);
  });

  it('slow runs never earn trust', () => {
    const profile = new CodeProfile();
    for (let i = 0; i < 5; i += 1) profile.recordRun(60);
    expect(profile.trusted).toBe(false);
  });

  it('keeps trust through rare slow entries, such as the isolate collecting garbage inside one', () => {
    const profile = new CodeProfile();
    // A 15 ms entry every 100 fast runs, for 10,000 runs.
    for (let i = 0; i < 10_000; i += 1) {
      if (i % 100 === 99) profile.recordEntry(15);
      profile.recordRun(1);
    }
    expect(profile.trusted).toBe(true);
  });

  it('loses trust for good when slow entries take more than their allowance', () => {
    const often = new CodeProfile();
    // A 20 ms entry every 10 fast runs overdraws the allowance within a few dozen runs.
    for (let i = 0; i < 100; i += 1) {
      if (i % 10 === 9) often.recordEntry(20);
      often.recordRun(1);
    }
    expect(often.trusted).toBe(false);
    for (let i = 0; i < 1_000; i += 1) often.recordRun(1);
    expect(often.trusted).toBe(false);

    const once = new CodeProfile();
    for (let i = 0; i < 5; i += 1) once.recordRun(1);
    once.recordEntry(400);
    expect(once.trusted).toBe(false);
  });
});
