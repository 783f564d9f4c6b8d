/**
 * The card area's tables, as src/db/schema.ts composes them (type-only): each sub-area's tables.ts
 * holds its own (products, applications, cards, controls, top-ups, transactions, replacements).
 */
import type { ApplicationTables } from './applications/tables.js';
import type { CardRecordTables } from './cards/tables.js';
import type { ControlTables } from './controls/tables.js';
import type { ProductTables } from './products/tables.js';
import type { ReplacementTables } from './replacements/tables.js';
import type { TopUpTables } from './topups/tables.js';
import type { TransactionTables } from './transactions/tables.js';

export interface CardTables
  extends ProductTables, ApplicationTables, CardRecordTables, ControlTables, TopUpTables, TransactionTables {}

/** The card lifecycle (migration 022). */
export interface CardLifecycleTables extends ReplacementTables {}
