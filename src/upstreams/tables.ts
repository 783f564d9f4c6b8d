/** Tables of upstream orders, injected behaviours and QR payments. */
// eslint-disable-next-line @typescript-eslint/no-empty-interface
export interface UpstreamTables {}
