import { ErrorCode } from '@toolhost/contracts';
import { errorResponseOf } from './error-response';
import { RegistryError } from './registry.error';

/** Stands in for Nest's HttpException (Nest 12 is ESM-only, out of reach of jest's CommonJS runtime). */
class FakeHttpException extends Error {
  constructor(
    private readonly response: string | object,
    private readonly status: number,
  ) {
    super(typeof response === 'string' ? response : 'http error');
  }
  getStatus(): number {
    return this.status;
  }
  getResponse(): string | object {
    return this.response;
  }
}

describe('errorResponseOf', () => {
  it('maps registry errors to their contract status and body', () => {
    expect(errorResponseOf(RegistryError.toolNotFound())).toEqual({
      status: 404,
      body: { error: { code: 'TOOL_NOT_FOUND', message: 'tool not found' } },
      log: 'none',
    });
    const invalid = RegistryError.invalidBody([{ path: '/title', message: 'is required' }]);
    expect(errorResponseOf(invalid).body).toEqual({
      error: {
        code: 'VALIDATION_FAILED',
        message: 'invalid request body: title is required',
        details: { errors: [{ path: '/title', message: 'is required' }] },
      },
    });
    expect(errorResponseOf(RegistryError.forbidden('no')).status).toBe(403);
    expect(errorResponseOf(RegistryError.unauthorized()).status).toBe(401);
  });

  it('names framework errors with contract codes', () => {
    expect(errorResponseOf(new FakeHttpException({ message: 'Cannot GET /x', statusCode: 404 }, 404)).body).toEqual({
      error: { code: ErrorCode.NOT_FOUND, message: 'Cannot GET /x' },
    });
    expect(errorResponseOf(new FakeHttpException('too large', 413))).toMatchObject({
      status: 413,
      body: { error: { code: ErrorCode.BAD_REQUEST } },
    });
    expect(errorResponseOf(new FakeHttpException('media', 415))).toMatchObject({
      status: 400,
      body: { error: { code: 'BAD_REQUEST', message: expect.stringMatching(/Content-Type/) } },
    });
  });

  it('passes the readiness report of a 503 through', () => {
    const report = { status: 'error', info: { draining: true } };
    expect(errorResponseOf(new FakeHttpException(report, 503))).toEqual({
      status: 503,
      body: report,
      log: 'none',
    });
  });

  it('answers 503 UNAVAILABLE when Postgres cannot be reached, through TypeORM wrappers', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    const wrapped = Object.assign(new Error('query failed'), { driverError: refused });
    const shuttingDown = Object.assign(new Error('terminating connection due to administrator command'), {
      code: '57P01',
    });
    for (const error of [refused, wrapped, shuttingDown, new Error('timeout exceeded when trying to connect')]) {
      expect(errorResponseOf(error)).toEqual({
        status: 503,
        body: { error: { code: 'UNAVAILABLE', message: expect.stringMatching(/database is unavailable/) } },
        log: 'outage',
      });
    }
    // A constraint violation is a bug, not an outage.
    expect(errorResponseOf(Object.assign(new Error('duplicate key'), { code: '23505' })).status).toBe(500);
  });

  it('hides unknown errors behind a generic 500', () => {
    const response = errorResponseOf(new Error('connection to 10.0.0.5 refused: password=hunter2'));
    expect(response).toEqual({
      status: 500,
      body: { error: { code: 'INTERNAL', message: 'internal error' } },
      log: 'error',
    });
  });
});
