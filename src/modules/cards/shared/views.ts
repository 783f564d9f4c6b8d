/** Helpers of the card area's views. */

/** A timestamp as the API answers it (ISO 8601), null kept. */
export const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());
