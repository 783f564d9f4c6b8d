import { createHash } from 'node:crypto';
import type { Db } from '../../db/schema.js';
import { brandingOf, logoOf, upsertBranding } from './queries.js';

/**
 * A merchant's branding on its hosted screens (docs/hosted-screens.md, "Who asks"): a display
 * name, a logo and an accent colour, set in the console. Pure rules first (the logo's type from
 * its bytes, the colour, the text colour on it), then the reads and writes.
 */

export const logoBytesMax = 256 * 1024;
export const displayNameMax = 80;

export type LogoType = 'image/png' | 'image/jpeg' | 'image/webp';

/**
 * The image type of these bytes by their magic numbers, or undefined. Only raster types a browser
 * shows in an <img> and that carry no script: never SVG, never what a filename or a declared type says.
 */
export function sniffImage(bytes: Uint8Array): LogoType | undefined {
  const starts = (sig: readonly number[], at = 0) =>
    bytes.length >= at + sig.length && sig.every((b, i) => bytes[at + i] === b);
  if (starts([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'image/png';
  if (starts([0xff, 0xd8, 0xff])) return 'image/jpeg';
  if (starts([0x52, 0x49, 0x46, 0x46]) && starts([0x57, 0x45, 0x42, 0x50], 8)) return 'image/webp';
  return undefined;
}

/** `#rrggbb` only (lower-cased), or undefined: nothing else reaches a stylesheet. */
export function normaliseAccent(value: string): string | undefined {
  const v = value.trim().toLowerCase();
  return /^#[0-9a-f]{6}$/.test(v) ? v : undefined;
}

/** WCAG 2 relative luminance of `#rrggbb`. */
export function luminance(hex: string): number {
  const channel = (i: number) => {
    const c = parseInt(hex.slice(1 + 2 * i, 3 + 2 * i), 16) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * channel(0) + 0.7152 * channel(1) + 0.0722 * channel(2);
}

export function contrastRatio(a: string, b: string): number {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
  return (hi + 0.05) / (lo + 0.05);
}

/**
 * The text colour on the accent: white or black, whichever contrasts more. One of the two always
 * reaches 4.5:1 (WCAG AA) on any colour, so no accent can make the button unreadable.
 */
export function textOn(accent: string): '#ffffff' | '#000000' {
  return contrastRatio(accent, '#ffffff') >= contrastRatio(accent, '#000000') ? '#ffffff' : '#000000';
}

/**
 * The per-merchant stylesheet (the CSP allows stylesheets of our own origin only, no inline
 * style): the accent on the buttons and the header's rule, the text on the buttons readable.
 */
export function accentStylesheet(accent: string): string {
  const text = textOn(accent);
  return (
    `button { background: ${accent}; border-color: ${accent}; color: ${text}; }\n` +
    `button:hover { background: ${accent}; filter: brightness(0.92); }\n` +
    `.merchant { border-bottom: 4px solid ${accent}; padding-bottom: .5rem; }\n`
  );
}

export interface Branding {
  /** The display name, or the merchant's registered name. */
  name: string;
  accent: string | null;
  logo: { type: string; etag: string } | null;
  /** Changes with every change of the branding: the version of its asset URLs. */
  version: string;
}

export const logoPath = (merchantId: string) => `/hosted/branding/${encodeURIComponent(merchantId)}/logo`;
export const accentPath = (merchantId: string) => `/hosted/branding/${encodeURIComponent(merchantId)}/accent.css`;

/** How the merchant's screens present it; undefined for an unknown merchant. */
export async function readBranding(db: Db, merchantId: string): Promise<Branding | undefined> {
  const row = await brandingOf(db, merchantId);
  if (!row) return undefined;
  return {
    name: row.display_name ?? row.name,
    accent: row.accent_color,
    logo: row.logo_type && row.logo_etag ? { type: row.logo_type, etag: row.logo_etag } : null,
    version: row.updated_at ? String(new Date(row.updated_at).getTime()) : '0',
  };
}

export async function readLogo(
  db: Db,
  merchantId: string,
): Promise<{ bytes: Buffer; type: string; etag: string } | undefined> {
  const row = await logoOf(db, merchantId);
  return row?.logo && row.logo_type && row.logo_etag
    ? { bytes: Buffer.from(row.logo), type: row.logo_type, etag: row.logo_etag }
    : undefined;
}

export interface BrandingChange {
  displayName: string | null;
  accent: string | null;
  /** undefined: keep the logo; null: remove it. */
  logo?: { bytes: Buffer; type: LogoType } | null;
}

export async function saveBranding(db: Db, merchantId: string, change: BrandingChange, now: Date): Promise<void> {
  const logo =
    change.logo === undefined
      ? {}
      : change.logo === null
        ? { logo: null, logo_type: null, logo_etag: null }
        : {
            logo: change.logo.bytes,
            logo_type: change.logo.type,
            logo_etag: createHash('sha256').update(change.logo.bytes).digest('base64url').slice(0, 22),
          };
  const values = { display_name: change.displayName, accent_color: change.accent, ...logo, updated_at: now };
  await upsertBranding(db, merchantId, values);
}
