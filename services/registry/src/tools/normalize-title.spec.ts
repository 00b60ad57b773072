import { normalizeTitle } from './normalize-title';

describe('normalizeTitle', () => {
  it('trims and collapses whitespace runs, newlines and tabs included', () => {
    expect(normalizeTitle('  Weather \t\n  lookup  ')).toBe('Weather lookup');
    expect(normalizeTitle('\u00a0a\u2003b ')).toBe('a b');
    expect(normalizeTitle('   ')).toBe('');
  });
});
