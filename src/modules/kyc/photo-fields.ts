import { fileField, type FormState } from '../hosted-screens/index.js';

/**
 * The photo uploads of a KYC form: the identity document's and the face's, as the KYC screen asks
 * for them (screens.ts) and as the card supplement screen asks for them again.
 */

/** The image size limit shown to the member (the framework cuts uploads at 5 MB: form-body.ts). */
export const imageSizeMaxMb = 5;
const imageAccept = 'image/jpeg,image/png';
const imageHint = `A JPEG or PNG image, smaller than ${imageSizeMaxMb} MB.`;

/** `keptNote`: a photo is on record and is kept unless a new one is chosen (then the field is optional). */
interface PhotoFieldOptions {
  required: boolean;
  keptNote?: string;
}

export const documentPhotoField = (s: FormState, opts: PhotoFieldOptions) =>
  fileField(s, {
    name: 'document_image',
    label: 'Photo of the document',
    hint: `The page with your photo. ${imageHint}`,
    accept: imageAccept,
    ...opts,
  });

export const selfiePhotoField = (s: FormState, opts: PhotoFieldOptions) =>
  fileField(s, {
    name: 'selfie_image',
    label: 'Photo of your face',
    hint: `Face the camera in good light, without glasses or a hat. ${imageHint}`,
    accept: imageAccept,
    ...opts,
  });
