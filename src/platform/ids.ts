import { randomBytes, randomUUID, hash } from 'node:crypto';

export const newId = (prefix: string): string => `${prefix}_${randomUUID()}`;
export const randomToken = (bytes = 32): string => randomBytes(bytes).toString('base64url');
/** One-shot `crypto.hash` (Node 20.12+): no Hash object per call, a third of `createHash`'s time. */
export const sha256Hex = (data: string | Buffer): string => hash('sha256', data, 'hex');

/** Accepts `<prefix>_<rest>` or the bare `<rest>` where the reference makes the prefix optional. */
export function withPrefix(prefix: string, id: string): string {
  return id.startsWith(`${prefix}_`) ? id : `${prefix}_${id}`;
}
