/**
 * TLS through the pinned connection: the client connects to the checked address (127.0.0.1) yet names the host for
 * SNI and the certificate check, so a certificate for api.test is accepted for api.test and refused for another name
 * that resolves to the same address. The certificate is made for the test by openssl (a self-signed one, trusted
 * through the client's `ca`).
 */
import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EgressError } from '@toolhost/sandbox';
import { EgressBudget } from './egress-budget';
import { EgressClient, type EgressFetchContext } from './egress-client';
import { EgressPolicy } from './egress-policy';
import { operatorPolicyOf } from './egress-settings';
import { parseCidr, type Cidr } from './ip-address';

const dir = mkdtempSync(join(tmpdir(), 'toolhost-egress-tls-'));
execFileSync(
  'openssl',
  [
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    '1',
    '-subj',
    '/CN=api.test',
    '-addext',
    'subjectAltName=DNS:api.test',
    '-keyout',
    join(dir, 'key.pem'),
    '-out',
    join(dir, 'cert.pem'),
  ],
  { stdio: 'ignore' },
);
const key = readFileSync(join(dir, 'key.pem'));
const cert = readFileSync(join(dir, 'cert.pem'));
rmSync(dir, { recursive: true, force: true });

let server: Server;
let port = 0;
const servernames: (string | false | null)[] = [];
const client = new EgressClient({
  maxResponseBytes: 1024,
  maxRequestBytes: 1024,
  timeoutMs: 5_000,
  allowCidrs: [parseCidr('127.0.0.1/32')].filter((cidr): cidr is Cidr => cidr !== undefined),
  resolver: () => Promise.resolve([{ address: '127.0.0.1', family: 4 }]),
  ca: cert,
});
const ctx = (allow: string[]): EgressFetchContext => ({
  policy: EgressPolicy.forTool(allow, operatorPolicyOf({ EGRESS_TOOL_HOSTS: 'on' })),
  signal: new AbortController().signal,
  deadline: Date.now() + 10_000,
  budget: new EgressBudget(10, 10),
});

beforeAll(async () => {
  server = createServer({ key, cert }, (req, res) => res.end(`hello over ${req.socket.remoteAddress ?? ''}`));
  server.on('secureConnection', (socket) => servernames.push(socket.servername));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  await client.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

it('names the host for SNI and the certificate while connecting to the checked address', async () => {
  const answer = await client.fetch(
    { url: `https://api.test:${port}/`, method: 'GET', headers: [] },
    ctx([`api.test:${port}`]),
  );
  expect(answer.status).toBe(200);
  expect(new TextDecoder().decode(answer.body)).toMatch(/^hello over /);
  expect(servernames).toContain('api.test');
});

it('refuses a certificate that does not name the host asked for', async () => {
  let failure: unknown;
  try {
    await client.fetch({ url: `https://other.test:${port}/`, method: 'GET', headers: [] }, ctx([`other.test:${port}`]));
  } catch (error) {
    failure = error;
  }
  expect(failure).toBeInstanceOf(EgressError);
  expect(failure).toMatchObject({
    code: 'NETWORK_ERROR',
    message: expect.stringMatching(/other\.test.*altnames/),
  });
});
