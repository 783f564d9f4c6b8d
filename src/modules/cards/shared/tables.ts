/** Column types and value types the card area's table files share. */
import type { ColumnType } from 'kysely';
import type { Minor } from '../../../db/columns.js';

export type MinorColumn = ColumnType<string, Minor, Minor>;
export type MinorDefault = ColumnType<string, Minor | undefined, Minor>;

export type FormFactor = 'virtual' | 'physical';

export interface Address {
  address: string;
  city: string;
  state?: string;
  country: string;
  postal_code: string;
}
