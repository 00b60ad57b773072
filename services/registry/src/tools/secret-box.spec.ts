import { randomBytes } from 'node:crypto';
import { SecretBox } from './secret-box';
import { defined } from '../../../../test/support/defined';

describe('SecretBox', () => {
  const box = new SecretBox(randomBytes(32));
  const aad = SecretBox.aad('3f1c6a9e-0000-4000-8000-000000000001', 1);

  it('round-trips secrets', () => {
    const secrets = { API_KEY: 'sk-123', EMPTY: '', UNICODE: 'ключ' };
    expect(box.open(box.seal(secrets, aad), aad)).toEqual(secrets);
  });

  it('does not store the plaintext and uses a fresh IV each time', () => {
    const first = box.seal({ API_KEY: 'sk-very-secret' }, aad);
    const second = box.seal({ API_KEY: 'sk-very-secret' }, aad);
    expect(first.toString('latin1')).not.toContain('sk-very-secret');
    expect(first.equals(second)).toBe(false);
  });

  it('refuses a blob bound to another tool or version', () => {
    const blob = box.seal({ A: 'b' }, aad);
    expect(() => box.open(blob, SecretBox.aad('3f1c6a9e-0000-4000-8000-000000000001', 2))).toThrow();
  });

  it('refuses a tampered blob and another key', () => {
    const blob = box.seal({ A: 'b' }, aad);
    const tampered = Buffer.from(blob);
    const last = tampered.length - 1;
    tampered[last] = defined(tampered[last]) ^ 1;
    expect(() => box.open(tampered, aad)).toThrow();
    expect(() => new SecretBox(randomBytes(32)).open(blob, aad)).toThrow();
  });

  it('needs a 32-byte key', () => {
    expect(() => new SecretBox(randomBytes(16))).toThrow(/32-byte/);
  });
});
