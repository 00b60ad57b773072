import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const FORMAT_V1 = 1;
const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * AES-256-GCM for a tool version's secrets. The blob is `1 | iv(12) | tag(16) | ciphertext`; the associated data
 * binds it to its row (tool id and version), so a blob copied onto another tool does not decrypt.
 */
export class SecretBox {
  constructor(private readonly key: Buffer) {
    if (key.length !== 32) throw new Error('SecretBox needs a 32-byte key');
  }

  seal(secrets: Record<string, string>, associatedData: string): Buffer {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(associatedData, 'utf8'));
    const ciphertext = Buffer.concat([cipher.update(JSON.stringify(secrets), 'utf8'), cipher.final()]);
    return Buffer.concat([Buffer.from([FORMAT_V1]), iv, cipher.getAuthTag(), ciphertext]);
  }

  open(blob: Buffer, associatedData: string): Record<string, string> {
    if (blob.length < 1 + IV_BYTES + TAG_BYTES || blob[0] !== FORMAT_V1) throw new Error('unknown secrets format');
    const iv = blob.subarray(1, 1 + IV_BYTES);
    const tag = blob.subarray(1 + IV_BYTES, 1 + IV_BYTES + TAG_BYTES);
    const decipher = createDecipheriv('aes-256-gcm', this.key, iv);
    decipher.setAAD(Buffer.from(associatedData, 'utf8'));
    decipher.setAuthTag(tag);
    const plain = Buffer.concat([decipher.update(blob.subarray(1 + IV_BYTES + TAG_BYTES)), decipher.final()]);
    const parsed: unknown = JSON.parse(plain.toString('utf8'));
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('bad secrets payload');
    // fromEntries defines own properties, whatever the names.
    return Object.fromEntries(
      Object.entries(parsed).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
    );
  }

  /** The associated data of a version's secrets. */
  static aad(toolId: string, version: number): string {
    return `toolhost:tool-secrets:${toolId}:${version}`;
  }
}
