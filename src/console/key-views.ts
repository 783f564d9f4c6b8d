/**
 * What the API key pages share (key-pages.ts: the list and creation; one-key-pages.ts: one key): a
 * key's status and scopes, the secrets shown once (the allow-list's form: allowlist-form.ts).
 */
import type { Selectable } from 'kysely';
import type { ApiKeysTable } from '../platform/tables.js';
import { html, type HtmlPart } from '../modules/hosted-screens/index.js';
import type { KeyWithSecrets } from '../modules/merchants/index.js';
import { badge, when } from './views.js';

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
