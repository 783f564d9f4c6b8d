/**
 * An API key's allow-list as a form edits it (key-pages.ts: a new key's; one-key-pages.ts: a key's
 * own): the entries sent, the preview of what each matches, and the lines that can never match,
 * which hold the save back until "Save anyway".
 */
import { describeEntry, isAllowed } from '../platform/http/ip-allowlist.js';
import { html, type HtmlPart } from '../modules/hosted-screens/index.js';
import { one, type FormFields } from './form.js';
import { allowlistLines } from './rules.js';
import { badge, table } from './views.js';

/** The allow-list a form sent: a textarea sends CRLF line ends; the list is kept one trimmed entry per line. */
export const allowlistSent = (form: FormFields): string => allowlistLines(one(form, 'ip_allowlist')).join('\n');

/** The lines of an allow-list that can never match (the API keeps them and they match nothing: the console says so
 * before saving). */
function neverMatching(text: string): string[] {
  return allowlistLines(text).filter((entry) => !describeEntry(entry).matches);
}

/** The problem shown when a save would keep lines that match nothing; "Save anyway" (intent save-anyway) keeps them. */
const unmatchedProblem = (lines: readonly string[]) =>
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

/** Why an allow-list is not saved: lines that can never match, unless the form said "Save anyway". */
export function unmatchedRefusal(draft: string, intent: string): string | undefined {
  const unmatched = neverMatching(draft);
  return unmatched.length > 0 && intent !== 'save-anyway' ? unmatchedProblem(unmatched) : undefined;
}

/** The "Save anyway" button (intent save-anyway), offered beside a preview of lines that match nothing. */
export function saveAnywayButton(draft: string, previewed: boolean): HtmlPart {
  return previewed && neverMatching(draft).length > 0
    ? html`<button type="submit" name="intent" value="save-anyway" class="secondary">Save anyway</button>`
    : '';
}
