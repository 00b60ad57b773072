import { functionNameOf } from './trading-goose-file.mapper';

describe('functionNameOf', () => {
  it.each([
    ['Slug Generator', 'slug_generator'],
    ['  Währung → Format!  ', 'wahrung_format'],
    ['CAGR (imported) 2', 'cagr_imported_2'],
    ['日本語', 'tool'],
    ['x'.repeat(63) + ' y', 'x'.repeat(63)],
  ])('%s → %s', (title, name) => {
    expect(functionNameOf(title)).toBe(name);
    expect(name).toMatch(/^[a-z0-9_]{1,64}$/);
  });
});
