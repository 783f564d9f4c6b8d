import { hkdfSync } from 'node:crypto';

/**
 * The hosted-screen master key (`HOSTED_SCREEN_KEY`) and the keys derived from it. One secret in
 * configuration; each use gets its own key through HKDF-SHA256 with a label, so a key never serves
 * two purposes (the CSRF MAC cannot be turned into the image cipher's key or back).
 */

export const hostedScreenKeyBytes = 32;

/** Labels of the derived keys. A new use adds a label; changing one makes old data unreadable. */
export type DerivedKeyLabel =
  | 'hosted-screens/csrf/v1'
  | 'kyc/images/v1'
  | 'idempotency/secret-fields/v1'
  | 'cards/supplement-images/v1'
  | 'console/csrf/v1'
  | 'console/totp/v1'
  | 'console/device/v1'
  | 'pagination/cursor/v1';

/**
 * A 32-byte key written as 64 hex digits or as base64 / base64url (44 or 43 characters); undefined
 * for anything else.
 */
export function parseHostedScreenKey(text: string): Buffer | undefined {
  const value = text.trim();
  if (/^[0-9a-fA-F]{64}$/.test(value)) return Buffer.from(value, 'hex');
  if (/^[A-Za-z0-9+/_-]{43}={0,1}$/.test(value)) {
    const bytes = Buffer.from(value.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
    if (bytes.length === hostedScreenKeyBytes) return bytes;
  }
  return undefined;
}

const derived = new WeakMap<Buffer, Map<DerivedKeyLabel, Buffer>>();

/** HKDF-SHA256(master, label): 32 bytes, computed once per master key and label. */
export function deriveKey(master: Buffer, label: DerivedKeyLabel): Buffer {
  if (master.length !== hostedScreenKeyBytes)
    throw new Error(`the hosted-screen key must be ${hostedScreenKeyBytes} bytes, got ${master.length}`);
  let byLabel = derived.get(master);
  if (!byLabel) {
    byLabel = new Map();
    derived.set(master, byLabel);
  }
  let key = byLabel.get(label);
  if (!key) {
    key = Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), label, 32));
    byLabel.set(label, key);
  }
  return key;
}

/** A derived key of the service's hosted-screen key (resolved at start-up by src/server.ts). */
export function configuredKey(config: { hostedScreenKey: Buffer | undefined }, label: DerivedKeyLabel): Buffer {
  if (!config.hostedScreenKey)
    throw new Error('the hosted-screen key is not configured (src/server.ts resolves it at start-up)');
  return deriveKey(config.hostedScreenKey, label);
}
