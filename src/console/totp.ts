import { createCipheriv, createDecipheriv, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * The optional second factor: time-based one-time passwords (RFC 6238: HMAC-SHA1, 30-second
 * steps, 6 digits), as every authenticator app reads them. The shared secret must be read back to
 * check a code, so it is stored sealed (AES-256-GCM under a key derived from HOSTED_SCREEN_KEY,
 * the user's id as associated data: a sealed secret copied to another user does not open). Pure
 * functions.
 */

export const totpStepSeconds = 30;
export const totpDigits = 6;
/** Codes of one step before and after now are accepted too (clocks drift, people type slowly). */
export const totpWindowSteps = 1;
const secretBytes = 20;

export function newTotpSecret(): Buffer {
  return randomBytes(secretBytes);
}

const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** RFC 4648 base32 without padding: how authenticator apps take a secret typed in. */
export function base32(bytes: Buffer): string {
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += alphabet[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += alphabet[(value << (5 - bits)) & 31];
  return out;
}

/** The `otpauth://` URI an app imports (issuer and account shown in the app). */
export function otpauthUri(secret: Buffer, account: string, issuer: string): string {
  const label = encodeURIComponent(`${issuer}:${account}`);
  return (
    `otpauth://totp/${label}?secret=${base32(secret)}&issuer=${encodeURIComponent(issuer)}` +
    `&algorithm=SHA1&digits=${totpDigits}&period=${totpStepSeconds}`
  );
}

export const stepAt = (unixMs: number) => Math.floor(unixMs / 1000 / totpStepSeconds);

/** The code of one step (RFC 4226 dynamic truncation). */
export function totpCode(secret: Buffer, step: number, digits = totpDigits): string {
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(step));
  const mac = createHmac('sha1', secret).update(counter).digest();
  const offset = mac[mac.length - 1]! & 0x0f;
  const binary = ((mac[offset]! & 0x7f) << 24) | (mac[offset + 1]! << 16) | (mac[offset + 2]! << 8) | mac[offset + 3]!;
  return String(binary % 10 ** digits).padStart(digits, '0');
}

/**
 * The step a code matches within the window, if any, and only if it is later than the last step
 * used: a code is good once (a code seen over a shoulder cannot be replayed).
 */
export function matchTotp(secret: Buffer, code: string, nowMs: number, lastStep: number | null): number | undefined {
  const typed = code.replace(/\s/g, '');
  if (!/^[0-9]{6}$/.test(typed)) return undefined;
  const now = stepAt(nowMs);
  for (let step = now - totpWindowSteps; step <= now + totpWindowSteps; step++) {
    if (lastStep !== null && step <= lastStep) continue;
    const expected = Buffer.from(totpCode(secret, step));
    if (timingSafeEqual(expected, Buffer.from(typed))) return step;
  }
  return undefined;
}

/** `v1.<iv>.<tag>.<ciphertext>` (base64url), bound to the user. */
export function sealSecret(key: Buffer, userId: string, secret: Buffer): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(`console-totp\n${userId}`));
  const data = Buffer.concat([cipher.update(secret), cipher.final()]);
  return ['v1', iv, cipher.getAuthTag(), data]
    .map((p) => (typeof p === 'string' ? p : p.toString('base64url')))
    .join('.');
}

export function openSecret(key: Buffer, userId: string, sealed: string): Buffer {
  const [version, iv, tag, data] = sealed.split('.');
  if (version !== 'v1' || !iv || !tag || !data) throw new Error('console: a sealed TOTP secret is malformed');
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
  decipher.setAAD(Buffer.from(`console-totp\n${userId}`));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]);
}
