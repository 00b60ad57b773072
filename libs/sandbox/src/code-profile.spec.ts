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
});
