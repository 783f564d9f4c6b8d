/** The remittance area's tables, as db/schema.ts composes them; each is defined in its sub-area's tables.ts. */
import type { RemitCorridorsTable } from './corridors/tables.js';
import type { RemitOrdersTable } from './orders/tables.js';
import type { RemitPayeeEntitiesTable, RemitPayeeIdSchemeTable, RemitPayeesTable } from './payees/tables.js';

export interface RemittanceTables {
  remit_corridors: RemitCorridorsTable;
  remit_payee_id_scheme: RemitPayeeIdSchemeTable;
  remit_payee_entities: RemitPayeeEntitiesTable;
  remit_payees: RemitPayeesTable;
  remit_orders: RemitOrdersTable;
}
