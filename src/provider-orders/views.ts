/** What every provider order's row says of the provider (src/provider-orders/tables.ts's columns). */
interface ProviderFactsRow {
  upstream_outcome: string;
  provider_order_id: string | null;
  provider_status: string | null;
  check_count: number;
}

/**
 * What the provider told us of an order, as the operator's views of top-ups, QR payments and
 * remittance orders show it: its answer to the call, its order id and last status, the status
 * queries made so far.
 */
export const providerFactsView = (row: ProviderFactsRow) => ({
  upstream_outcome: row.upstream_outcome,
  provider_order_id: row.provider_order_id,
  provider_status: row.provider_status,
  check_count: row.check_count,
});
