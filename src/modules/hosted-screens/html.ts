/**
 * The hosted pages' HTML: an escaping template tag, the page shell and the form parts every
 * screen is built from. Pure functions from data to markup; nothing here reads a request.
 *
 * Accessibility, built in so a screen cannot forget it: every control has a <label>; a hint and
 * an error are tied to their control by `aria-describedby`, and an error sets `aria-invalid`;
 * related controls sit in a <fieldset> with a <legend>; the error summary at the top of the page
 * links each message to its field; the pages work with the keyboard alone and without JavaScript
 * (there is none: the Content-Security-Policy forbids scripts).
 */

/** Markup that is already safe: produced by `html` or by the helpers below, never from input. */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

export type HtmlPart = SafeHtml | string | number | null | undefined | false | readonly HtmlPart[];

const escapes: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => escapes[c]!);
}

function renderPart(part: HtmlPart): string {
  if (part === null || part === undefined || part === false) return '';
  if (part instanceof SafeHtml) return part.value;
  if (Array.isArray(part)) return part.map(renderPart).join('');
  return escapeHtml(String(part));
}

/** Template tag: interpolated values are escaped unless they are `SafeHtml`; arrays are joined. */
export function html(strings: TemplateStringsArray, ...values: HtmlPart[]): SafeHtml {
  let out = strings[0] ?? '';
  for (let i = 0; i < values.length; i++) out += renderPart(values[i]!) + (strings[i + 1] ?? '');
  return new SafeHtml(out);
}

/** A message shown next to one field (and in the summary at the top of the page). */
export interface FieldError {
  field: string;
  message: string;
}

/** What a form shows: the values entered (kept on a re-render) and the errors found. */
export interface FormState {
  values: Readonly<Record<string, string>>;
  errors: readonly FieldError[];
}

/** Where a screen's form posts, and the CSRF token it must carry (see csrf.ts). */
export interface FormFrame {
  action: string;
  csrfToken: string;
}

/** The hidden form field that carries the CSRF token. */
export const csrfFieldName = 'csrf_token';

export const fieldId = (name: string): string => `f-${name.replace(/[^A-Za-z0-9_-]/g, '-')}`;

function errorOf(state: FormState, name: string): string | undefined {
  return state.errors.find((e) => e.field === name)?.message;
}

interface FieldCommon {
  name: string;
  label: string;
  hint?: string;
  required?: boolean;
}

/** Label, hint and error of one control, and the attributes that tie them to it. */
function fieldParts(state: FormState, f: FieldCommon) {
  const id = fieldId(f.name);
  const error = errorOf(state, f.name);
  const described = [f.hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ');
  const attrs = new SafeHtml(
    [
      `id="${id}" name="${escapeHtml(f.name)}"`,
      described ? ` aria-describedby="${described}"` : '',
      error ? ' aria-invalid="true"' : '',
      f.required ? ' required' : '',
    ].join(''),
  );
  const label = html`<label for="${id}">${f.label}${
    f.required ? '' : html` <span class="optional">(optional)</span>`
  }</label>`;
  const hint = f.hint ? html`<p class="hint" id="${id}-hint">${f.hint}</p>` : '';
  const err = error
    ? html`<p class="field-error" id="${id}-error"><span class="visually-hidden">Error: </span>${error}</p>`
    : '';
  return { id, error, attrs, label, hint, err };
}

export interface TextFieldOptions extends FieldCommon {
  type?: 'text' | 'date' | 'email' | 'tel';
  autocomplete?: string;
  maxLength?: number;
  inputMode?: 'text' | 'numeric';
  /** Shown, submitted with the form, but not changeable. */
  readOnly?: boolean;
}

export function textField(state: FormState, f: TextFieldOptions): SafeHtml {
  const p = fieldParts(state, f);
  const value = state.values[f.name] ?? '';
  return html`<div class="field${p.error ? ' field--error' : ''}">${p.label}${p.hint}${
    p.err
  }<input ${p.attrs} type="${f.type ?? 'text'}" value="${value}"${
    f.autocomplete ? html` autocomplete="${f.autocomplete}"` : ''
  }${f.maxLength ? html` maxlength="${f.maxLength}"` : ''}${
    f.inputMode ? html` inputmode="${f.inputMode}"` : ''
  }${f.readOnly ? html` readonly` : ''}></div>`;
}

export interface SelectFieldOptions extends FieldCommon {
  options: readonly { value: string; label: string }[];
  autocomplete?: string;
  /** The first, empty choice ("Choose..."). */
  placeholder?: string;
}

export function selectField(state: FormState, f: SelectFieldOptions): SafeHtml {
  const p = fieldParts(state, f);
  const current = state.values[f.name] ?? '';
  const options = f.options.map(
    (o) => html`<option value="${o.value}"${o.value === current ? html` selected` : ''}>${o.label}</option>`,
  );
  return html`<div class="field${p.error ? ' field--error' : ''}">${p.label}${p.hint}${p.err}<select ${p.attrs}${
    f.autocomplete ? html` autocomplete="${f.autocomplete}"` : ''
  }>${f.placeholder !== undefined ? html`<option value="">${f.placeholder}</option>` : ''}${options}</select></div>`;
}

export interface FileFieldOptions extends FieldCommon {
  accept: string;
  /** A file is already on record: shown as kept when nothing new is chosen. */
  keptNote?: string;
}

export function fileField(state: FormState, f: FileFieldOptions): SafeHtml {
  const p = fieldParts(state, f);
  const kept = f.keptNote ? html`<p class="kept">${f.keptNote}</p>` : '';
  return html`<div class="field${p.error ? ' field--error' : ''}">${p.label}${p.hint}${kept}${
    p.err
  }<input ${p.attrs} type="file" accept="${f.accept}"></div>`;
}

/** Related controls under one legend. */
export function fieldset(legend: string, content: HtmlPart, hint?: string): SafeHtml {
  return html`<fieldset><legend>${legend}</legend>${
    hint ? html`<p class="hint">${hint}</p>` : ''
  }${content}</fieldset>`;
}

/** Label and value pairs shown but not editable. */
export function summaryList(rows: readonly { label: string; value: string }[]): SafeHtml {
  return html`<dl class="summary">${rows.map((r) => html`<div><dt>${r.label}</dt><dd>${r.value}</dd></div>`)}</dl>`;
}

/**
 * The form every screen posts: method POST to the screen's own URL, the CSRF field first, then
 * the content and one submit button. `multipart` when it carries files.
 */
export function form(
  frame: FormFrame,
  opts: { multipart?: boolean; submitLabel: string },
  content: HtmlPart,
): SafeHtml {
  const enctype = opts.multipart ? html` enctype="multipart/form-data"` : '';
  return html`<form method="post" action="${frame.action}"${
    enctype
  } novalidate><input type="hidden" name="${csrfFieldName}" value="${frame.csrfToken}">${
    content
  }<div class="actions"><button type="submit">${opts.submitLabel}</button></div></form>`;
}

/** Static markup: the opening of the error summary, up to its list. */
const errorSummaryOpening = new SafeHtml(
  '<div class="error-summary" role="alert" aria-labelledby="error-summary-title" tabindex="-1">' +
    '<h2 id="error-summary-title">There is a problem</h2><ul>',
);

/**
 * The summary at the top of a page with errors: a heading, then each message as a link to its
 * field. It gets focus first in reading order (it follows the page title).
 */
export function errorSummary(errors: readonly FieldError[]): SafeHtml {
  if (errors.length === 0) return new SafeHtml('');
  return html`${errorSummaryOpening}${errors.map(
    (e) => html`<li><a href="#${fieldId(e.field)}">${e.message}</a></li>`,
  )}</ul></div>`;
}

/** Path of the one stylesheet (served by the hosted routes). */
export const stylesheetPath = '/hosted/assets/screen.css';

export interface PageShell {
  title: string;
  body: HtmlPart;
  errors?: readonly FieldError[];
  /** The merchant whose member the ticket is for: named above the screen, so the page says who asks (issue 42). */
  merchant?: MerchantShell;
}

/** The merchant's branding on a page (branding.ts): its name, and its logo and accent stylesheet when set. */
export interface MerchantShell {
  name: string;
  logoUrl?: string;
  accentUrl?: string;
}

/** Static markup: a document's opening, up to its title. */
const documentHeadOpening = new SafeHtml(
  '<html lang="en"><head><meta charset="utf-8">' +
    '<meta name="viewport" content="width=device-width, initial-scale=1"><meta name="referrer" content="no-referrer">',
);

/** A whole document: one stylesheet of ours, no script, the title as the one <h1>. */
export function renderPage(p: PageShell): string {
  const errors = p.errors ?? [];
  const title = errors.length > 0 ? `Error: ${p.title}` : p.title;
  return (
    '<!doctype html>\n' +
    html`${documentHeadOpening}<title>${title}</title><link rel="stylesheet" href="${stylesheetPath}">${
      p.merchant?.accentUrl ? html`<link rel="stylesheet" href="${p.merchant.accentUrl}">` : ''
    }</head><body>${
      p.merchant
        ? html`<header class="merchant">${
            p.merchant.logoUrl ? html`<img class="merchant-logo" src="${p.merchant.logoUrl}" alt="">` : ''
          }<p>A secure page of this service, for <strong>${p.merchant.name}</strong></p></header>`
        : ''
    }<main class="screen" id="main"><h1>${p.title}</h1>${errorSummary(errors)}${p.body}</main></body></html>`.value
  );
}

/** The page for a link that cannot be used: no detail of why. `retry` links back to the form (403). */
export function unavailablePage(status: 404 | 410 | 403 | 400 | 500, retry?: string): string {
  const texts: Record<typeof status, [string, string]> = {
    404: ['Page not found', 'This link is not valid. Ask the app that sent you here for a new link.'],
    410: [
      'This link is no longer valid',
      'The link has been used, has expired or was withdrawn. Ask the app that sent you here for a new link.',
    ],
    403: [
      'The form could not be sent',
      'The page was open too long, or cookies are blocked for this page. Open the form again and send it once more.',
    ],
    400: ['The form could not be read', 'Open the form again and send it once more.'],
    500: ['Something went wrong', 'Try again in a few minutes.'],
  };
  const [title, text] = texts[status];
  return renderPage({
    title,
    body: html`<p>${text}</p>${retry ? html`<p><a href="${retry}">Open the form again</a></p>` : ''}`,
  });
}
