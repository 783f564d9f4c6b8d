import type { FastifyRequest } from 'fastify';

/** The console's form posts: parsing (bounded) and reading the fields. */

/** A form's fields: every value of each name (checkboxes repeat a name). */
export type FormFields = Readonly<Record<string, readonly string[]>>;
export const formFieldsMax = 100;
export const formFieldBytesMax = 16 * 1024;
export const formBodyBytesMax = 128 * 1024;

export class ConsoleFormError extends Error {}

export function parseForm(text: string): FormFields {
  const fields: Record<string, string[]> = {};
  let count = 0;
  for (const [name, value] of new URLSearchParams(text)) {
    if (++count > formFieldsMax) throw new ConsoleFormError('too many fields');
    if (value.length > formFieldBytesMax) throw new ConsoleFormError('a field is too long');
    (fields[name] ??= []).push(value);
  }
  return fields;
}

export const one = (form: FormFields, name: string): string => form[name]?.[0] ?? '';
export const all = (form: FormFields, name: string): readonly string[] => form[name] ?? [];

/** The fields of a form post; any other body (JSON, say) is no form and has no fields, so no CSRF field either. */
export function formOf(req: FastifyRequest): FormFields {
  const type = (req.headers['content-type'] ?? '').toLowerCase();
  const body = req.body;
  // multipart/form-data reaches a handler only where its parser is registered (the branding form),
  // whose hook has already turned the parts into fields.
  const form = type.startsWith('application/x-www-form-urlencoded') || type.startsWith('multipart/form-data');
  return form && body && typeof body === 'object' && !Buffer.isBuffer(body) ? (body as FormFields) : {};
}
