import { createCipheriv, randomBytes } from 'node:crypto';

/**
 * Encryption at rest of supplement images, as the KYC images (src/modules/kyc/images.ts, whose
 * module boundary keeps it private): AES-256-GCM with the derived key `cards/supplement-images/v1`,
 * a fresh 96-bit IV, and the image's id, member and kind as additional data.
 */
export function sealSupplementImage(
  key: Buffer,
  binding: { imageId: string; memberId: string; kind: string },
  plain: Uint8Array,
) {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(`${binding.imageId}|${binding.memberId}|${binding.kind}`, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(plain), cipher.final()]);
  return { iv, ciphertext, authTag: cipher.getAuthTag() };
}
