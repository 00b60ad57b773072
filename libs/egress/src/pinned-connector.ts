import type { buildConnector } from 'undici';

/**
 * A connector that connects to one address, checked beforehand, whatever host the request names: there is no second
 * lookup for a rebinding DNS server to answer differently. TLS still names the host (SNI and the certificate check
 * use `servername`).
 */
export function pinnedConnector(
  connect: buildConnector.connector,
  address: string,
  servername: string | undefined,
): buildConnector.connector {
  return (options, callback) => {
    connect({ ...options, hostname: address, ...(servername === undefined ? {} : { servername }) }, callback);
  };
}
