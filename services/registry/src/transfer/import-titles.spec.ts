import { TITLE_MAX_LENGTH } from '@toolhost/contracts';
import { ImportTitles } from './import-titles';

describe('ImportTitles', () => {
  it('keeps a free title and numbers one in use from 1, counting the renamed', () => {
    const titles = new ImportTitles(['Slug Generator', 'Weather']);
    expect(titles.take('Currency Formatter')).toBe('Currency Formatter');
    expect(titles.take('Slug Generator')).toBe('Slug Generator (imported) 1');
    expect(titles.renamed).toBe(1);
  });

  it('treats titles given earlier in the same import as taken, and takes the first free N', () => {
    const titles = new ImportTitles(['Weather', 'Weather (imported) 2']);
    expect(['Weather', 'Weather', 'Weather', 'Weather'].map((t) => titles.take(t))).toEqual([
      'Weather (imported) 1',
      'Weather (imported) 3',
      'Weather (imported) 4',
      'Weather (imported) 5',
    ]);
    expect(titles.renamed).toBe(4);
  });

  it('a title that looks renamed is itself only renamed when taken', () => {
    const titles = new ImportTitles(['A']);
    expect(titles.take('A')).toBe('A (imported) 1');
    expect(titles.take('A (imported) 1')).toBe('A (imported) 1 (imported) 1');
    expect(titles.take('A (imported) 2')).toBe('A (imported) 2');
  });

  it('cuts a long title to leave room for the suffix, by code points', () => {
    const long = '𝔸'.repeat(TITLE_MAX_LENGTH);
    const titles = new ImportTitles([long]);
    const renamed = titles.take(long);
    expect(Array.from(renamed)).toHaveLength(TITLE_MAX_LENGTH);
    expect(renamed.endsWith(' (imported) 1')).toBe(true);
    expect(renamed).not.toMatch(/\p{Cs}/u);
  });
});
