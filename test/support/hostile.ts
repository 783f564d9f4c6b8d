import fc from 'fast-check';
/** A path segment as it goes on the request line (already encoded, or deliberately not). */
export const encodeSegment = (text: string): string => {
  try {
    return encodeURIComponent(text);
  } catch {
    return '%ED%A0%80'; // an unpaired surrogate has no UTF-8 form: its would-be bytes
  }
};

/** JSON texts JSON.stringify cannot make: numbers past double range, lone surrogates and a NUL in strings. */
export const unwritableJsonTexts = [
  '{"amount":1e400}',
  '{"amount":-1e400,"limit":123456789012345678901234567890}',
  '{"a":"\\u0000"}',
  '{"\\ud800":1}',
  '{"url":"\\udc00"}',
];

/** JSON objects and arrays nested past any bound (the fuzz tests' generators). */
export const deeplyNestedJson = () => [
  fc.integer({ min: 33, max: 20_000 }).map((n) => '{"a":'.repeat(n) + '1' + '}'.repeat(n)),
  fc.integer({ min: 33, max: 20_000 }).map((n) => '['.repeat(n) + ']'.repeat(n)),
];
