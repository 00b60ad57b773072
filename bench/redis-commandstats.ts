/**
 * Redis's own count of calls and microseconds per command (`INFO commandstats`), and the difference between two
 * readings: what `bench:e2e` and `bench:cpu` divide by the invocations of a measured window.
 */
import type Redis from 'ioredis';

export type CommandStats = Record<string, { calls: number; usec: number }>;

/** Server-wide: on a Redis others use, their commands count too (`bench:e2e` starts a Redis of its own). */
export async function redisCommandStats(redis: Redis): Promise<CommandStats> {
  const text = await redis.info('commandstats');
  const stats: CommandStats = {};
  for (const [, name, calls, usec] of text.matchAll(/^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/gm)) {
    if (name !== undefined) stats[name] = { calls: Number(calls), usec: Number(usec) };
  }
  return stats;
}

/** What ran between two readings; the `INFO` of the readings themselves left out. */
export function commandsBetween(before: CommandStats, after: CommandStats): CommandStats {
  const diff: CommandStats = {};
  for (const [name, now] of Object.entries(after)) {
    if (name === 'info') continue;
    const calls = now.calls - (before[name]?.calls ?? 0);
    if (calls > 0) diff[name] = { calls, usec: now.usec - (before[name]?.usec ?? 0) };
  }
  return diff;
}
