import { NESTED_INVOCATION_NAMESPACE, nameBasedUuid, nestedInvocationId } from './nested-invocation-id';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const DNS_NAMESPACE = '6ba7b810-9dad-11d1-80b4-00c04fd430c8';
const URL_NAMESPACE = '6ba7b811-9dad-11d1-80b4-00c04fd430c8';

describe('nameBasedUuid', () => {
  // Reference values from Python's uuid.uuid5.
  it.each([
    [DNS_NAMESPACE, 'www.example.com', '2ed6657d-e927-568b-95e1-2665a8aea6a2'],
    [URL_NAMESPACE, 'https://example.com/ünï', 'e968e47a-ae23-5347-b8fc-67d6158b5ffd'],
    [NESTED_INVOCATION_NAMESPACE, '00000000-0000-4000-8000-000000000001:0', 'c18f70ab-56e0-5e6b-ac84-c3af6d0a7733'],
  ])('derives the RFC 9562 version 5 UUID of (%s, %s)', (namespace, name, expected) => {
    expect(nameBasedUuid(namespace, name)).toBe(expected);
  });

  it('refuses a namespace that is not a UUID', () => {
    expect(() => nameBasedUuid('not-a-uuid', 'x')).toThrow(RangeError);
  });
});

describe('nestedInvocationId', () => {
  const parent = '00000000-0000-4000-8000-000000000001';

  it('is the same for the same parent and call index, and a version 5 UUID', () => {
    expect(nestedInvocationId(parent, 1)).toBe(nestedInvocationId(parent, 1));
    expect(nestedInvocationId(parent, 1)).toBe('82a4008e-e927-51ef-be1b-0067548a28e4');
    expect(nestedInvocationId(parent, 7)).toMatch(UUID);
  });

  it('differs between call indexes and between parents, and from the parent itself', () => {
    const ids = new Set<string>();
    for (const root of [parent, '00000000-0000-4000-8000-000000000002']) {
      for (let index = 0; index < 50; index += 1) ids.add(nestedInvocationId(root, index));
    }
    expect(ids.size).toBe(100);
    expect(ids.has(parent)).toBe(false);
  });
});
