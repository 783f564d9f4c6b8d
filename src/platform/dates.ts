/** A stored time as the API writes it: ISO 8601 in UTC with milliseconds (`2026-12-07T04:10:00.000Z`). */
export const iso = (d: Date | string): string => new Date(d).toISOString();

/** `iso`, or null for a time that is not set. */
export const isoOrNull = (d: Date | string | null | undefined): string | null =>
  d === null || d === undefined ? null : iso(d);
