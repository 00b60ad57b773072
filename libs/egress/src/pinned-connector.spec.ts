import type { buildConnector } from 'undici';
import { pinnedConnector } from './pinned-connector';

describe('pinnedConnector', () => {
  const seen: buildConnector.Options[] = [];
  const base: buildConnector.connector = (options) => {
    seen.push(options);
  };
  const options: buildConnector.Options = {
    hostname: 'api.example.com',
    host: 'api.example.com:443',
    protocol: 'https:',
    port: '443',
  };

  beforeEach(() => (seen.length = 0));

  it('connects to the checked address and names the host for TLS (SNI, certificate)', () => {
    pinnedConnector(base, '93.184.216.34', 'api.example.com')(options, () => undefined);
    expect(seen).toEqual([{ ...options, hostname: '93.184.216.34', servername: 'api.example.com' }]);
  });

  it('leaves SNI to undici for a literal address (SNI cannot carry one)', () => {
    pinnedConnector(base, '2606:4700::1', undefined)({ ...options, hostname: '[2606:4700::1]' }, () => undefined);
    expect(seen).toEqual([{ ...options, hostname: '2606:4700::1' }]);
  });
});
