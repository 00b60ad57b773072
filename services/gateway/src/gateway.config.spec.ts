import { ConfigError } from '@toolhost/config';
import { idempotencyTtlMs, loadGatewayConfig } from './gateway.config';

function problemsOf(env: NodeJS.ProcessEnv): string[] {
  try {
    loadGatewayConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}

describe('loadGatewayConfig', () => {
  it('starts with the defaults', () => {
    const config = loadGatewayConfig({ NODE_ENV: 'development' });
    expect(config.CONCURRENCY_SLOT_TTL_MS).toBeGreaterThanOrEqual(config.INVOKE_WAIT_MAX_MS);
  });

  it('refuses a concurrency slot TTL shorter than the longest wait, which would reclaim slots of running calls', () => {
    const problems = problemsOf({
      NODE_ENV: 'development',
      CONCURRENCY_SLOT_TTL_MS: '60000',
      INVOKE_WAIT_MAX_MS: '90000',
    });
    expect(problems).toEqual([
      expect.stringMatching(/^CONCURRENCY_SLOT_TTL_MS: 60000 is shorter than INVOKE_WAIT_MAX_MS/),
    ]);
    expect(
      problemsOf({ NODE_ENV: 'development', CONCURRENCY_SLOT_TTL_MS: '90000', INVOKE_WAIT_MAX_MS: '90000' }),
    ).toEqual([]);
    // Without a concurrency quota there are no slots to reclaim.
    expect(
      problemsOf({
        NODE_ENV: 'development',
        MAX_QUEUED_PER_TENANT: '0',
        CONCURRENCY_SLOT_TTL_MS: '60000',
        INVOKE_WAIT_MAX_MS: '90000',
      }),
    ).toEqual([]);
  });

  it('keeps an Idempotency-Key no longer than the invocation it names, as long by default', () => {
    expect(idempotencyTtlMs(loadGatewayConfig({ NODE_ENV: 'development', INVOCATION_RETENTION_S: '3600' }))).toBe(
      3_600_000,
    );
    expect(idempotencyTtlMs(loadGatewayConfig({ NODE_ENV: 'development', IDEMPOTENCY_TTL_MS: '60000' }))).toBe(60_000);
    expect(
      problemsOf({ NODE_ENV: 'development', INVOCATION_RETENTION_S: '3600', IDEMPOTENCY_TTL_MS: '3600001' }),
    ).toEqual([expect.stringMatching(/^IDEMPOTENCY_TTL_MS: 3600001 is longer than INVOCATION_RETENTION_S/)]);
  });

  it('lists every problem at once', () => {
    const problems = problemsOf({
      NODE_ENV: 'production',
      CONCURRENCY_SLOT_TTL_MS: '1000',
      INVOKE_WAIT_MAX_MS: '2000',
    });
    expect(problems).toHaveLength(2);
    expect(problems.join('\n')).toMatch(/INTERNAL_API_TOKEN/);
  });
});
