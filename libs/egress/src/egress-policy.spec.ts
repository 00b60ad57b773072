import { ConfigError } from '@toolhost/config';
import { carriesSecret } from './egress-client';
import { EgressPolicy, checkToolAllowList } from './egress-policy';
import { allowCidrsOf, checkEgressSettings, metricHostsOf, operatorPolicyOf } from './egress-settings';

const open = operatorPolicyOf({ EGRESS_TOOL_HOSTS: 'on' });
const strict = operatorPolicyOf({
  EGRESS_TOOL_HOSTS: 'on',
  EGRESS_ALLOW: '*.example.com, api.partner.io:8443',
  EGRESS_DENY: 'internal.example.com',
});
const closed = operatorPolicyOf({ EGRESS_TOOL_HOSTS: 'off' });

describe('checkToolAllowList (at save)', () => {
  it('answers the entries in normal form when the operator allows any public host', () => {
    const checked = checkToolAllowList(['API.example.com', '*.stripe.com', 'localhost:3000', '0x7f000001'], open);
    expect(checked.problems).toEqual([]);
    expect(checked.patterns.map((pattern) => pattern.text)).toEqual([
      'api.example.com',
      '*.stripe.com',
      'localhost:3000',
      '127.0.0.1',
    ]);
  });

  it('names each entry outside the operator policy, refused by it, or not a pattern', () => {
    const checked = checkToolAllowList(
      ['api.example.com', 'evil.io', 'internal.example.com', 'api.partner.io', 'api.partner.io:8443', 'a b'],
      strict,
    );
    expect(checked.problems).toEqual([
      { index: 1, message: expect.stringMatching(/^evil\.io is outside/) },
      { index: 2, message: expect.stringMatching(/^internal\.example\.com is refused by this server/) },
      { index: 3, message: expect.stringMatching(/^api\.partner\.io is outside/) },
      { index: 5, message: expect.stringMatching(/^"a b" must be a host/) },
    ]);
    expect(checked.patterns.map((pattern) => pattern.text)).toEqual(['api.example.com', 'api.partner.io:8443']);
  });

  it('refuses any host when the operator lets no tool reach the network, and accepts an empty list', () => {
    expect(checkToolAllowList(['api.example.com'], closed).problems).toEqual([
      { index: -1, message: expect.stringMatching(/no tool reach the network/) },
    ]);
    expect(checkToolAllowList([], closed).problems).toEqual([]);
  });
});

describe('EgressPolicy (at run time)', () => {
  const url = (text: string): URL => new URL(text);

  it('lets a request go only to a host the tool lists, inside the operator policy, not denied', () => {
    const policy = EgressPolicy.forTool(['*.example.com', 'api.partner.io:8443', 'internal.example.com'], strict);
    expect(policy.refusal(url('https://api.example.com/v1'))).toBeUndefined();
    expect(policy.refusal(url('http://api.example.com./v1'))).toBeUndefined();
    expect(policy.refusal(url('https://api.partner.io:8443/'))).toBeUndefined();
    expect(policy.refusal(url('https://api.example.com:8443/'))).toMatch(/not in the tool's network.allow/);
    expect(policy.refusal(url('https://evil.io/'))).toMatch(/not in the tool's network.allow/);
    // Saved when the policy allowed it; refused now that it does not.
    expect(policy.refusal(url('https://internal.example.com/'))).toMatch(/refused by this server/);
    expect(policy.refusal(url('https://internal.example.com./'))).toMatch(/refused by this server/);
  });

  it('checks the operator allow list again, for tools saved before it narrowed', () => {
    const policy = EgressPolicy.forTool(['evil.io'], strict);
    expect(policy.refusal(url('https://evil.io/'))).toMatch(/outside what this server allows/);
  });

  it('refuses everything for a tool without a list, and for every tool when tool hosts are off', () => {
    expect(EgressPolicy.forTool(undefined, open).refusal(url('https://api.example.com/'))).toMatch(/lists no hosts/);
    expect(EgressPolicy.forTool(['api.example.com'], closed).refusal(url('https://api.example.com/'))).toMatch(
      /no tool reach the network/,
    );
  });

  it('normalises numeric hosts before matching', () => {
    const policy = EgressPolicy.forTool(['127.0.0.1:8080'], open);
    expect(policy.refusal(url('http://0x7f000001:8080/'))).toBeUndefined();
    expect(policy.refusal(url('http://2130706433:8080/'))).toBeUndefined();
    expect(policy.refusal(url('http://127.1:8080/'))).toBeUndefined();
    expect(policy.refusal(url('http://[::ffff:127.0.0.1]:8080/'))).toMatch(/not in the tool's network.allow/);
  });
});

describe('carriesSecret', () => {
  const secret = 'sk-live-4f9a2c+/=';
  const request = (headers: [string, string][], body?: string) => ({
    headers,
    ...(body === undefined ? {} : { body: new TextEncoder().encode(body) }),
  });

  it('finds a secret in the URL (as is or encoded), a header value, or the body bytes', () => {
    expect(carriesSecret(new URL(`https://x.io/?key=${encodeURIComponent(secret)}`), request([]), secret)).toBe(true);
    expect(carriesSecret(new URL(`https://x.io/${secret}`), request([]), 'sk-live-4f9a2c')).toBe(true);
    expect(carriesSecret(new URL('https://x.io/'), request([['authorization', `Bearer ${secret}`]]), secret)).toBe(
      true,
    );
    expect(carriesSecret(new URL('https://x.io/'), request([], JSON.stringify({ key: secret })), secret)).toBe(true);
    expect(carriesSecret(new URL('https://x.io/'), request([['x', 'y']], 'nothing here'), secret)).toBe(false);
  });

  it('ignores values too short to mean anything (as the log mask does)', () => {
    expect(carriesSecret(new URL('https://x.io/?on=1'), request([]), '1')).toBe(false);
  });
});

describe('egress settings', () => {
  it('lists every bad pattern and range at once', () => {
    const problems = checkEgressSettings({
      EGRESS_TOOL_HOSTS: 'on',
      EGRESS_ALLOW: 'ok.example.com, https://bad.example.com',
      EGRESS_DENY: '*',
      EGRESS_ALLOW_CIDRS: '127.0.0.1/32, 10.0.0.0/99',
      EGRESS_METRIC_HOSTS: '*.example.com',
    });
    expect(problems).toEqual([
      expect.stringMatching(/^EGRESS_ALLOW: "https:\/\/bad.example.com"/),
      expect.stringMatching(/^EGRESS_DENY: "\*"/),
      expect.stringMatching(/^EGRESS_ALLOW_CIDRS: "10.0.0.0\/99"/),
      expect.stringMatching(/^EGRESS_METRIC_HOSTS: "\*.example.com"/),
    ]);
    expect(() => allowCidrsOf({ EGRESS_ALLOW_CIDRS: 'nope' })).toThrow(ConfigError);
  });

  it('reads lists with spaces and empty entries', () => {
    expect(allowCidrsOf({ EGRESS_ALLOW_CIDRS: ' 127.0.0.1/32 ,, fd00::/8 ' })).toHaveLength(2);
    expect(metricHostsOf({ EGRESS_METRIC_HOSTS: 'API.example.com, api.stripe.com' })).toEqual([
      'api.example.com',
      'api.stripe.com',
    ]);
    expect(operatorPolicyOf({ EGRESS_TOOL_HOSTS: 'on', EGRESS_ALLOW: '' }).allow).toEqual([]);
  });
});
