/** The README documents every environment variable the services read, and the quick start stays two commands. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { configRows } from '../../scripts/config-table';

const readme = readFileSync(join(__dirname, '..', '..', 'README.md'), 'utf8');

describe('README', () => {
  it.each(configRows().map((row) => row.name))('documents %s in the configuration table', (name) => {
    expect(readme).toMatch(new RegExp(`^\\|\\s*\`${name}\`\\s*\\|`, 'm'));
  });

  it('keeps the two-command quick start', () => {
    expect(readme).toContain('npm ci && npm start');
    expect(readme).toContain('npm test');
  });
});
