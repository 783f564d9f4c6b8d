/** Tables of the business areas (deposits, withdrawals, ...). */
// eslint-disable-next-line @typescript-eslint/no-empty-interface
export interface MoneyFlowTables {}
