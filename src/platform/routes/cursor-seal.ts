import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * List cursors as the public API hands them out: the internal cursor (pagination.ts, a row's
 * `seq`, a bigserial shared by every merchant) sealed with AES-256-GCM under a key derived from
 * the service's master key. Base64 alone would let any merchant read the sequence and so count
 * what all merchants create between two of its own pages (deposits, orders, cards: business
 * figures of other merchants). Sealed, a cursor is opaque and cannot be forged; one that does not
 * open (tampered, from another installation, or hand-made) restarts the walk from the first page,
 * the reference's rule for an unreadable cursor. Every process derives the same key
 * (`HOSTED_SCREEN_KEY`), so a cursor works whichever process answers the next page.
 */

const ivBytes = 12;
const tagBytes = 16;
/** The longest internal cursor is ~30 characters; anything sealed beyond this is not ours. */
const sealedMaxBytes = ivBytes + tagBytes + 64;

export function sealCursor(key: Buffer, cursor: string): string {
  const iv = randomBytes(ivBytes);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const body = Buffer.concat([cipher.update(cursor, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64url');
}

/** The internal cursor, or undefined for anything this key did not seal. */
export function openCursor(key: Buffer, sealed: string): string | undefined {
  if (sealed.length > Math.ceil((sealedMaxBytes * 4) / 3) || !/^[A-Za-z0-9_-]+$/.test(sealed)) return undefined;
  const raw = Buffer.from(sealed, 'base64url');
  if (raw.length <= ivBytes + tagBytes) return undefined;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, ivBytes));
    decipher.setAuthTag(raw.subarray(raw.length - tagBytes));
    return Buffer.concat([decipher.update(raw.subarray(ivBytes, raw.length - tagBytes)), decipher.final()]).toString(
      'utf8',
    );
  } catch {
    return undefined;
  }
}
