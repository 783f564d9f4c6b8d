/** A path segment as it goes on the request line (already encoded, or deliberately not). */
export const encodeSegment = (text: string): string => {
  try {
    return encodeURIComponent(text);
  } catch {
    return '%ED%A0%80'; // an unpaired surrogate has no UTF-8 form: its would-be bytes
  }
};
