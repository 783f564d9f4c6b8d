import { createHmac } from 'node:crypto';
import { sha256Hex } from '../ids.js';

/** What identifies an idempotent request's body and key: the key's shape and the body's hash (idempotency.ts keeps the
 * records). */

const keyShape = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isKeyShape(key: string): boolean {
  return keyShape.test(key);
}

/** Bodies are compared by content, not by bytes: key order and white space do not make another body. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value as object)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

export function requestHash(
  rawBody: Buffer | undefined,
  parsed: unknown,
  secrets?: { fields: readonly string[]; key: Buffer },
): string {
  if (!rawBody || rawBody.length === 0) return sha256Hex('');
  if (parsed === undefined) return sha256Hex(rawBody);
  return sha256Hex(canonicalJson(secrets ? maskSecretFields(parsed, secrets.fields, secrets.key) : parsed));
}

/**
 * A body with its secret fields (a card PIN) replaced by a keyed HMAC of their JSON: the same
 * secret still gives the same hash (a changed PIN is another body), but a stored hash cannot be
 * reversed by trying the few possible values without the service's key.
 */
export function maskSecretFields(body: unknown, fields: readonly string[], key: Buffer): unknown {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return body;
  const out: Record<string, unknown> = { ...(body as Record<string, unknown>) };
  for (const f of fields) {
    if (Object.hasOwn(out, f))
      out[f] = `hmac:${createHmac('sha256', key)
        .update(JSON.stringify(out[f]) ?? 'null')
        .digest('hex')}`;
  }
  return out;
}
