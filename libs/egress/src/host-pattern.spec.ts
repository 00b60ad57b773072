import { allowWithin, allows, deniedWhole, denies, parseHostPattern, type HostPattern } from './host-pattern';

const pattern = (text: string): HostPattern => {
  const parsed = parseHostPattern(text);
  if ('error' in parsed) throw new Error(`${text}: ${parsed.error}`);
  return parsed;
};

describe('parseHostPattern', () => {
  it.each([
    ['api.example.com', 'api.example.com'],
    ['API.Example.COM', 'api.example.com'],
    ['  api.example.com  ', 'api.example.com'],
    ['api.example.com.', 'api.example.com'],
    ['*.stripe.com', '*.stripe.com'],
    ['*.stripe.com:8443', '*.stripe.com:8443'],
    ['localhost:3000', 'localhost:3000'],
    ['203.0.113.7', '203.0.113.7'],
    ['0x7f000001', '127.0.0.1'],
    ['2130706433:8080', '127.0.0.1:8080'],
    ['127.1', '127.0.0.1'],
    ['[2001:DB8::1]', '[2001:db8::1]'],
    ['[::ffff:127.0.0.1]:81', '[::ffff:7f00:1]:81'],
    ['xn--bcher-kva.example', 'xn--bcher-kva.example'],
    ['bücher.example', 'xn--bcher-kva.example'],
  ])('reads %s as %s', (text, normal) => {
    expect(pattern(text).text).toBe(normal);
  });

  it.each([
    ['', /empty/],
    ['https://api.example.com', /not a URL/],
    ['api.example.com/v1', /not a URL/],
    ['user@api.example.com', /not a URL/],
    ['api.example.com:0', /port/],
    ['api.example.com:65536', /port/],
    ['api.example.com:http', /port/],
    ['api.example.com:', /port/],
    ['*', /only as its first label/],
    ['*.com', /two labels/],
    ['a.*.example.com', /only as its first label/],
    ['*.127.0.0.1', /IP address/],
    ['2001:db8::1', /brackets/],
    ['[2001:db8::1]x', /after the IPv6/],
    ['exa mple.com', /not a URL/],
    ['-bad.example.com', /not a valid host/],
    ['under_score.example.com', /not a valid host/],
    ['a..b', /not a valid host/],
  ])('refuses %j', (text, message) => {
    const parsed = parseHostPattern(text);
    expect('error' in parsed && parsed.error).toMatch(message);
  });
});

describe('matching a request', () => {
  it('an exact host: that host only, on 80 and 443 unless it names a port', () => {
    const exact = pattern('api.example.com');
    expect(allows(exact, 'api.example.com', 443)).toBe(true);
    expect(allows(exact, 'api.example.com', 80)).toBe(true);
    expect(allows(exact, 'api.example.com', 8080)).toBe(false);
    expect(allows(exact, 'x.api.example.com', 443)).toBe(false);
    expect(allows(exact, 'example.com', 443)).toBe(false);
    expect(allows(exact, 'api.example.com.evil.io', 443)).toBe(false);
    const port = pattern('api.example.com:8443');
    expect(allows(port, 'api.example.com', 8443)).toBe(true);
    expect(allows(port, 'api.example.com', 443)).toBe(false);
  });

  it('a wildcard: subdomains at any depth, never the domain itself or a look-alike', () => {
    const wildcard = pattern('*.stripe.com');
    expect(allows(wildcard, 'api.stripe.com', 443)).toBe(true);
    expect(allows(wildcard, 'a.b.stripe.com', 443)).toBe(true);
    expect(allows(wildcard, 'stripe.com', 443)).toBe(false);
    expect(allows(wildcard, 'evilstripe.com', 443)).toBe(false);
    expect(allows(wildcard, 'stripe.com.evil.io', 443)).toBe(false);
  });

  it('a deny pattern without a port refuses every port', () => {
    expect(denies(pattern('internal.example.com'), 'internal.example.com', 8080)).toBe(true);
    expect(denies(pattern('internal.example.com:8080'), 'internal.example.com', 443)).toBe(false);
    expect(denies(pattern('*.corp.example'), 'db.corp.example', 5432)).toBe(true);
  });
});

describe('one pattern within another (a tool list inside the operator policy)', () => {
  it.each([
    ['api.example.com', '*.example.com', true],
    ['*.api.example.com', '*.example.com', true],
    ['*.example.com', '*.example.com', true],
    ['example.com', '*.example.com', false],
    ['*.example.com', 'api.example.com', false],
    ['api.example.com', 'api.example.com', true],
    ['api.example.com:8443', 'api.example.com', false],
    ['api.example.com:443', 'api.example.com', true],
    ['api.example.com', 'api.example.com:8443', false],
    ['api.example.com:8443', '*.example.com:8443', true],
    ['api.example.org', '*.example.com', false],
  ])('%s within %s: %s', (inner, outer, expected) => {
    expect(allowWithin(pattern(inner), pattern(outer))).toBe(expected);
  });

  it('a deny pattern refuses a tool entry whole only when it covers all its hosts and ports', () => {
    expect(deniedWhole(pattern('db.corp.example'), pattern('*.corp.example'))).toBe(true);
    expect(deniedWhole(pattern('*.example.com'), pattern('internal.example.com'))).toBe(false);
    expect(deniedWhole(pattern('api.example.com'), pattern('api.example.com:8443'))).toBe(false);
    expect(deniedWhole(pattern('api.example.com:8443'), pattern('api.example.com:8443'))).toBe(true);
  });
});
