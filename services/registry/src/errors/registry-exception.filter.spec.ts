import { Logger, type ArgumentsHost } from '@nestjs/common';
import { RegistryExceptionFilter } from './registry-exception.filter';

function hostAnswering(statuses: number[]): ArgumentsHost {
  const reply = {
    status: (code: number) => {
      statuses.push(code);
      return { send: () => undefined };
    },
  };
  return { switchToHttp: () => ({ getResponse: () => reply }) } as unknown as ArgumentsHost;
}

describe('RegistryExceptionFilter', () => {
  afterEach(() => jest.restoreAllMocks());

  it('logs a database outage once every few seconds with the count of 503s, not once per request', () => {
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const error = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    const now = jest.spyOn(Date, 'now').mockReturnValue(10_000);
    const filter = new RegistryExceptionFilter();
    const statuses: number[] = [];
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    for (let i = 0; i < 30; i += 1) filter.catch(refused, hostAnswering(statuses));
    now.mockReturnValue(15_000);
    filter.catch(refused, hostAnswering(statuses));
    expect(statuses).toEqual(Array(31).fill(503));
    expect(error).not.toHaveBeenCalled();
    expect(warn.mock.calls.map(([fields]) => (fields as { answered503: number }).answered503)).toEqual([1, 30]);
  });

  it('logs an unexpected error with its stack every time', () => {
    const error = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    const filter = new RegistryExceptionFilter();
    const statuses: number[] = [];
    filter.catch(new TypeError('a bug'), hostAnswering(statuses));
    filter.catch(new TypeError('a bug'), hostAnswering(statuses));
    expect(statuses).toEqual([500, 500]);
    expect(error).toHaveBeenCalledTimes(2);
  });
});
