import { randomBytes, randomUUID, createHash } from 'node:crypto';

export const newId = (prefix: string): string => `${prefix}_${randomUUID()}`;
export const randomToken = (bytes = 32): string => randomBytes(bytes).toString('base64url');
export const sha256Hex = (data: string | Buffer): string => createHash('sha256').update(data).digest('hex');

/** Accepts `<prefix>_<rest>` or the bare `<rest>` where the reference makes the prefix optional. */
export function withPrefix(prefix: string, id: string): string {
  return id.startsWith(`${prefix}_`) ? id : `${prefix}_${id}`;
}
