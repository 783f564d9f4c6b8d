/** Tables of webhook endpoints and deliveries. */
// eslint-disable-next-line @typescript-eslint/no-empty-interface
export interface WebhookTables {}
