import type { FastifyRequest } from 'fastify';
import type { FormFields, UploadedFile } from './screen.js';

/**
 * Reading a hosted form's body, with a bound on everything. `application/x-www-form-urlencoded`
 * (forms without files) or `multipart/form-data` (forms with files, parsed by @fastify/multipart,
 * which the hosted routes alone register). Files are held in memory up to the size limit plus
 * one chunk; a larger file is marked `tooLarge` so its screen can say so next to the field.
 */

/** One image: 5 MB (docs/hosted-screens.md, "Images"). */
export const fileSizeMaxBytes = 5 * 1024 * 1024;
/** Files per submission. */
export const filesMax = 4;
/** Text fields per submission, and the length of each. */
export const fieldsMax = 40;
export const fieldSizeMaxBytes = 4 * 1024;
/** A form without files. */
export const urlencodedBodyMaxBytes = 64 * 1024;
/** Headers of one part (busboy's limit). */
const partHeaderPairsMax = 20;

export const multipartLimits = {
  fileSize: fileSizeMaxBytes,
  files: filesMax,
  fields: fieldsMax,
  fieldSize: fieldSizeMaxBytes,
  parts: filesMax + fieldsMax,
  headerPairs: partHeaderPairsMax,
};

export interface FormBody {
  fields: FormFields;
  files: UploadedFile[];
}

/** The body is not a form this framework reads (wrong type, over a count limit, cut short). */
export class FormBodyError extends Error {}

export function parseUrlencoded(text: string): Record<string, string> {
  const fields: Record<string, string> = {};
  const params = new URLSearchParams(text);
  let count = 0;
  for (const [name, value] of params) {
    if (++count > fieldsMax) throw new FormBodyError('too many fields');
    if (value.length > fieldSizeMaxBytes) throw new FormBodyError('a field is too long');
    fields[name] = value;
  }
  return fields;
}

/** Reads the request's form: fields and files. Throws `FormBodyError` for anything it cannot take. */
export async function readFormBody(req: FastifyRequest): Promise<FormBody> {
  const type = (req.headers['content-type'] ?? '').toLowerCase();
  if (type.startsWith('application/x-www-form-urlencoded')) {
    return { fields: (req.body as Record<string, string> | undefined) ?? {}, files: [] };
  }
  if (!type.startsWith('multipart/form-data') || !req.isMultipart()) throw new FormBodyError('not a form');
  const fields: Record<string, string> = {};
  const files: UploadedFile[] = [];
  try {
    for await (const part of req.parts({ limits: multipartLimits })) {
      if (part.type === 'field') {
        if (part.valueTruncated || part.fieldnameTruncated) throw new FormBodyError('a field is too long');
        fields[part.fieldname] = typeof part.value === 'string' ? part.value : String(part.value);
        continue;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of part.file) {
        size += (chunk as Buffer).length;
        if (size <= fileSizeMaxBytes) chunks.push(chunk as Buffer);
      }
      const tooLarge = part.file.truncated || size > fileSizeMaxBytes;
      // A file input left empty is sent as a part with no name and no bytes: not a file.
      if (size === 0 && !part.filename) continue;
      files.push({
        field: part.fieldname,
        data: tooLarge ? Buffer.alloc(0) : Buffer.concat(chunks),
        tooLarge,
        declaredType: part.mimetype,
      });
    }
  } catch (err) {
    if (err instanceof FormBodyError) throw err;
    throw new FormBodyError(err instanceof Error ? err.message : 'the form could not be read');
  }
  return { fields, files };
}
