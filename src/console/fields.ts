import { html, type SafeHtml } from '../modules/hosted-screens/index.js';
import { csrfField, type PageRequest } from './http.js';

/** The form fields the pages render: labelled inputs with their hint, selects, checkboxes, the CSRF field. */

export function csrfInput(page: PageRequest): SafeHtml {
  return html`<input type="hidden" name="${csrfField}" value="${page.csrf}">`;
}

export function textInput(
  name: string,
  label: string,
  opts: {
    value?: string;
    hint?: string;
    type?: string;
    required?: boolean;
    autocomplete?: string;
    inputMode?: 'numeric';
    id?: string;
  } = {},
): SafeHtml {
  // `id`: when two forms of a page have a field of the same name, each label must point at its own.
  const id = opts.id ?? `f-${name}`;
  return html`<div class="field"><label for="${id}">${label}</label>${
    opts.hint
      ? html`<p class="hint"
    id="${id}-hint">${opts.hint}</p>`
      : ''
  }<input id="${id}" name="${name}"
      type="${opts.type ?? 'text'}" value="${opts.value ?? ''}"${
        opts.hint ? html` aria-describedby="${id}-hint"` : ''
      }${opts.required ? html` required` : ''}${opts.autocomplete ? html` autocomplete="${opts.autocomplete}"` : ''}${
        opts.inputMode ? html` inputmode="${opts.inputMode}"` : ''
      }></div>`;
}

export function selectInput(
  name: string,
  label: string,
  options: readonly { value: string; label: string }[],
  current = '',
): SafeHtml {
  const id = `f-${name}`;
  return html`<div class="field"><label for="${id}">${label}</label><select id="${id}" name="${name}">${options.map(
    (o) => html`<option value="${o.value}"${o.value === current ? html` selected` : ''}>${o.label}</option>`,
  )}</select></div>`;
}

/** The options of a select of durations: the seconds each one sends, and the words it shows. */
export const durationOptions = (steps: readonly (readonly [seconds: number, label: string])[]) =>
  steps.map(([seconds, label]) => ({ value: String(seconds), label }));

export function checkboxes(
  name: string,
  legend: string,
  options: readonly { value: string; label: string }[],
  checked: readonly string[],
  hint?: string,
): SafeHtml {
  return html`<fieldset><legend>${legend}</legend>${hint ? html`<p class="hint">${hint}</p>` : ''}<div
    class="checks">${options.map(
      (o, i) =>
        html`<label for="f-${name}-${i}"><input type="checkbox" id="f-${name}-${i}" name="${name}" value="${o.value}"${
          checked.includes(o.value) ? html` checked` : ''
        }> ${o.label}</label>`,
    )}</div></fieldset>`;
}

/** A new password and its confirmation (the invite, the password change). */
export function newPasswordFields(): SafeHtml {
  return html`${textInput('password', 'New password', {
    type: 'password',
    required: true,
    autocomplete: 'new-password',
  })}${textInput('confirmation', 'New password again', {
    type: 'password',
    required: true,
    autocomplete: 'new-password',
  })}`;
}
