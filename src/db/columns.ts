import type { ColumnType } from 'kysely';

/** Column helper types shared by every area's tables.ts; this file imports no table. */

export type Environment = 'sandbox' | 'production';
/** Read as a Date; written as a Date or an ISO string; optional on insert where the column has a default. */
export type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;
export type NullableTimestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
/** A JSON column written as the caller's own JSON.stringify output. */
export type Json<T> = ColumnType<T, string, string>;
/** Money columns are numeric minor units: they arrive as decimal strings and are parsed to bigint. */
export type Minor = string | bigint;
