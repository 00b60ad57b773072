import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { defined } from './defined';

/**
 * The TCP ports a process listens on, read from /proc (Linux). Tests start services on port 0 and find the port the
 * kernel gave them here: a port probed free and handed to a process to bind later can be taken meanwhile (an
 * outgoing connection draws its local port from the same ephemeral range), which failed test/e2e under load with
 * EADDRINUSE.
 */
export function listeningPorts(pid: number): number[] {
  const inodes = new Set<string>();
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return [];
  }
  for (const fd of fds) {
    try {
      const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (match) inodes.add(defined(match[1]));
    } catch {
      // closed meanwhile
    }
  }
  const ports: number[] = [];
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      // local_address is ADDR:PORT in hex; state 0A is LISTEN; the inode is the tenth field.
      if (fields.length < 10 || fields[3] !== '0A' || !inodes.has(defined(fields[9]))) continue;
      ports.push(parseInt(defined(defined(fields[1]).split(':')[1]), 16));
    }
  }
  return ports;
}
