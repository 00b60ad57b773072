import { MAX_RECEIVED_ECHO_BYTES, problemDetails, problemSummary } from './problem-details';

describe('problem details', () => {
  const errors = [
    { path: '/title', message: 'is required' },
    { path: '/schema/function/extra', message: 'is not a known field' },
  ];

  it('lists every problem, and echoes a small input', () => {
    expect(problemDetails(errors)).toEqual({ errors });
    expect(problemDetails(errors, { a: 1 })).toEqual({ errors, received: { a: 1 } });
  });

  it('gives the size of an input too large to echo instead of the input', () => {
    const large = { text: 'x'.repeat(MAX_RECEIVED_ECHO_BYTES) };
    const details = problemDetails(errors, large);
    expect(details.received).toBeUndefined();
    expect(details.receivedBytes).toBe(JSON.stringify(large).length);
  });

  it('summarises the problems with their fields for people', () => {
    expect(problemSummary(errors)).toBe('title is required; schema.function.extra is not a known field');
    expect(problemSummary([{ path: '', message: 'the request body must be a JSON object' }])).toBe(
      'the request body must be a JSON object',
    );
  });
});
