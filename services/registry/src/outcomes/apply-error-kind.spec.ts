import { applyErrorKind } from './apply-error-kind';

const withCode = (code: string, message = 'failed'): Error => Object.assign(new Error(message), { code });

describe('applyErrorKind', () => {
  it('takes values Postgres refuses for data errors', () => {
    expect(applyErrorKind(withCode('22P05', 'unsupported Unicode escape sequence'))).toBe('data');
    expect(applyErrorKind(withCode('22021', 'invalid byte sequence for encoding "UTF8": 0x00'))).toBe('data');
    expect(applyErrorKind(withCode('23502'))).toBe('data');
    expect(applyErrorKind(withCode('54001', 'stack depth limit exceeded'))).toBe('data');
  });

  it('takes a database that went away or asks for a retry for transient', () => {
    expect(applyErrorKind(withCode('57P01', 'terminating connection due to administrator command'))).toBe('transient');
    expect(applyErrorKind(withCode('08006'))).toBe('transient');
    expect(applyErrorKind(withCode('40P01', 'deadlock detected'))).toBe('transient');
    expect(applyErrorKind(withCode('53300', 'too many connections'))).toBe('transient');
    expect(applyErrorKind(withCode('ECONNREFUSED'))).toBe('transient');
    expect(applyErrorKind(withCode('EPIPE'))).toBe('transient');
    expect(applyErrorKind(new Error('Connection terminated unexpectedly'))).toBe('transient');
    expect(applyErrorKind('not even an error')).toBe('transient');
  });

  it('leaves other server errors and JS programming errors to the caller', () => {
    expect(applyErrorKind(withCode('42703', 'column "x" does not exist'))).toBe('other');
    expect(applyErrorKind(withCode('XX000'))).toBe('other');
    expect(applyErrorKind(new TypeError("Cannot read properties of undefined (reading 'agentId')"))).toBe('other');
    expect(applyErrorKind(new RangeError('Maximum call stack size exceeded'))).toBe('other');
  });
});
