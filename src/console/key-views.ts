/**
 * What the API key pages share (key-pages.ts: the list and creation; one-key-pages.ts: one key): a
 * key's status and scopes, the secrets shown once, the allow-list's preview and the lines of it
 * that can never match.
 */
import type { Selectable } from 'kysely';
import type { ApiKeysTable } from '../platform/tables.js';
import { describeEntry, isAllowed } from '../platform/http/ip-allowlist.js';
import { html, type HtmlPart } from '../modules/hosted-screens/index.js';
import type { KeyWithSecrets } from '../modules/merchants/index.js';
import { allowlistLines } from './rules.js';
import { badge, table, when } from './views.js';

export type KeyRow = Selectable<ApiKeysTable>;

export function keyStatus(k: KeyRow, now: Date) {
  if (k.disabled) return badge('disabled', 'bad');
  if (k.expires_at && new Date(k.expires_at) <= now) return badge('expired', 'bad');
  if (k.expires_at) return badge(`expires ${when(k.expires_at)} (real time)`, 'warn');
  return badge('active', 'ok');
}

export function scopeList(k: Pick<KeyRow, 'scopes' | 'pending_scopes'>): HtmlPart {
  return html`${k.scopes.map((s) => html`<code>${s}</code> `)}${k.pending_scopes.map(
    (s) => html` ${badge(`${s}: waiting for approval`, 'warn')}`,
  )}`;
}

export function secretsPanel(k: KeyWithSecrets, heading: string): HtmlPart {
  return html`<div class="secret" role="status"><h2>${heading}</h2>
    <p><strong>Copy these now: they are shown only once.</strong> The service keeps only a hash of the API key.</p>
<p>Client id</p><code class="value">${k.client_id}</code><p>API key</p><code class="value" id="new-api-key">${
    k.api_key
  }</code><p>Signing key</p><code class="value" id="new-signing-key">${k.signing_key}</code></div>`;
}

/** The lines of an allow-list that can never match (the API keeps them and they match nothing: the console says so
 * before saving). */
export function neverMatching(text: string): string[] {
  return allowlistLines(text).filter((entry) => !describeEntry(entry).matches);
}

/** The problem shown when a save would keep lines that match nothing; "Save anyway" (intent save-anyway) keeps them. */
export const unmatchedProblem = (lines: readonly string[]) =>
  `${lines.length === 1 ? 'This line can' : 'These lines can'} never match any address: ${lines.join(', ')}. ` +
  `Correct ${lines.length === 1 ? 'it' : 'them'}, or press "Save anyway" to ` +
  `keep ${lines.length === 1 ? 'it' : 'them'} (${lines.length === 1 ? 'it matches' : 'they match'} nothing).`;

/** The preview of an allow-list: each line, what it matches, and whether this browser's address would pass. */
export function allowlistPreview(text: string, clientIp: string): HtmlPart {
  const lines = allowlistLines(text);
  return html`${table(
    'Preview: what each line matches',
    [
      { label: 'Line', cell: (l: { n: number; entry: string }) => String(l.n) },
      { label: 'Entry', cell: (l) => html`<code>${l.entry}</code>` },
      {
        label: 'Matches',
        cell: (l) => {
          const d = describeEntry(l.entry);
          return d.matches ? d.text : badge(d.text, 'bad');
        },
      },
    ],
    lines.map((entry, i) => ({ n: i + 1, entry })),
    'The list is empty: any address may use a sandbox key; a production key needs at least one entry.',
  )}
<p>Your address as this service sees it, <code>${clientIp}</code>, ${
    isAllowed(text, clientIp) ? 'would be allowed' : 'would not be allowed'
  }.</p>`;
}
