/**
 * listeningPorts finds the port a process was given by listen(0) (how test/e2e/stack.ts finds its services' ports
 * now, instead of probing a port free and handing it over to be taken meanwhile: EADDRINUSE under load), and only
 * the ports that process listens on.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type Server } from 'node:net';
import { listeningPorts } from './listening-ports';

const listen = (server: Server): Promise<number> =>
  new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      resolve(typeof address === 'object' && address ? address.port : 0);
    });
  });

describe('listeningPorts', () => {
  it("lists the port listen(0) bound in a process while it is held, and not another process's", async () => {
    const server = createServer();
    const port = await listen(server);
    try {
      expect(listeningPorts(process.pid)).toContain(port);
      // pid 1 is not this process: its sockets are not ours (nor readable, which yields none).
      expect(listeningPorts(1)).not.toContain(port);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
    expect(listeningPorts(process.pid)).not.toContain(port);
  });

  it('tells two processes apart: each is listed with its own port only', async () => {
    const server = createServer();
    const port = await listen(server);
    const child = spawn(process.execPath, [
      '-e',
      "require('node:net').createServer().listen(0, '127.0.0.1', function () { console.log(this.address().port) })",
    ]);
    try {
      const [line] = (await once(child.stdout, 'data')) as [Buffer];
      const childPort = Number(line.toString().trim());
      expect(childPort).toBeGreaterThan(0);
      expect(listeningPorts(child.pid ?? -1)).toEqual([childPort]);
      expect(listeningPorts(process.pid)).toContain(port);
      expect(listeningPorts(process.pid)).not.toContain(childPort);
    } finally {
      child.kill('SIGKILL');
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
