import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { DerivedKeyLabel } from '../../platform/auth/keys.js';
import type { KycImageKind } from './tables.js';

/**
 * Encryption at rest of KYC images and of the card supplement images (cards/applications): AES-256-GCM
 * with a key derived from HOSTED_SCREEN_KEY (`kyc/images/v1`, `cards/supplement-images/v1`), a fresh
 * 96-bit IV per image, and the image's id, member and kind as
 * additional data, so a ciphertext moved to another row does not decrypt. Pure functions.
 */

export const imageKeyLabel: DerivedKeyLabel = 'kyc/images/v1';

export interface SealedImage {
  iv: Buffer;
  ciphertext: Buffer;
  authTag: Buffer;
}

export interface ImageBinding {
  imageId: string;
  memberId: string;
  kind: KycImageKind;
}

const aad = (b: ImageBinding) => Buffer.from(`${b.imageId}|${b.memberId}|${b.kind}`, 'utf8');

export function sealImage(key: Buffer, binding: ImageBinding, plain: Uint8Array): SealedImage {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(aad(binding));
  const ciphertext = Buffer.concat([cipher.update(plain), cipher.final()]);
  return { iv, ciphertext, authTag: cipher.getAuthTag() };
}

/** An image sealed into the columns of its row (`SealedImageColumns`, db/columns.ts), with the label of its key. */
export function sealedImageColumns(keyLabel: DerivedKeyLabel, key: Buffer, binding: ImageBinding, plain: Uint8Array) {
  const sealed = sealImage(key, binding, plain);
  return { key_label: keyLabel, iv: sealed.iv, ciphertext: sealed.ciphertext, auth_tag: sealed.authTag };
}

/** The clear bytes; throws when the key, the binding or the bytes are not those it was sealed with. */
export function openImage(key: Buffer, binding: ImageBinding, sealed: SealedImage): Buffer {
  const decipher = createDecipheriv('aes-256-gcm', key, sealed.iv);
  decipher.setAAD(aad(binding));
  decipher.setAuthTag(sealed.authTag);
  return Buffer.concat([decipher.update(sealed.ciphertext), decipher.final()]);
}
