import { OutageLog } from './outage-log';

describe('OutageLog', () => {
  afterEach(() => jest.restoreAllMocks());

  it('writes once every few seconds with the count of 503s since the last line, not once per request', () => {
    const now = jest.spyOn(Date, 'now').mockReturnValue(10_000);
    const lines: { answered503: number; cause: string }[] = [];
    const log = new OutageLog((fields) => lines.push(fields));
    const refused = new Error('connect ECONNREFUSED 127.0.0.1:5432');
    for (let i = 0; i < 30; i += 1) log.answered(refused);
    now.mockReturnValue(14_999);
    log.answered(refused);
    now.mockReturnValue(15_000);
    log.answered(refused);
    expect(lines).toEqual([
      { answered503: 1, cause: 'connect ECONNREFUSED 127.0.0.1:5432' },
      { answered503: 31, cause: 'connect ECONNREFUSED 127.0.0.1:5432' },
    ]);
  });
});
