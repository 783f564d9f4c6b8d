/**
 * @merchant-wallet/sdk: merchant-facing client for the Merchant Wallet API.
 */

export { MerchantWalletClient, buildQueryString } from './client.js';
export type { CallOptions, RequestOptions, RawResult } from './client.js';
export { SDK_VERSION, isLoopbackName } from './config.js';
export type { MerchantWalletClientOptions } from './config.js';
export type { TokenStore } from './token.js';
export {
  MerchantWalletError,
  MerchantWalletInvalidRequestError,
  MerchantWalletAuthenticationError,
  MerchantWalletPermissionError,
  MerchantWalletNotFoundError,
  MerchantWalletIdempotencyError,
  MerchantWalletRateLimitError,
  MerchantWalletAPIError,
  MerchantWalletUpstreamError,
  MerchantWalletConnectionError,
  MerchantWalletAbortError,
  MerchantWalletSignatureVerificationError,
  StepUpRequiredError,
  ERROR_CLASS_BY_TYPE,
  unwrapErrorBody,
} from './errors.js';
export type { MerchantWalletErrorInit, ResponseHeaders } from './errors.js';
export { signRequest, buildSigningString, sha256Hex, isSignedMethod } from './signing.js';
export type { SignRequestInput } from './signing.js';
export { constructEvent, verifyWebhookSignature, signWebhook, webhooks } from './webhooks.js';
export type {
  ConstructEventOptions,
  VerifyWebhookSignatureInput,
  WebhookHeaders,
  WebhookVerificationFailure,
} from './webhooks.js';
export { EventStream, SseParser } from './event-stream.js';
export type { EventStreamOptions, SseMessage } from './event-stream.js';
export type { EventListFilters } from './resources/events.js';
export type { OpenedStream, StreamRequestOptions } from './client.js';
export {
  decideRetry,
  parseRetryAfter,
  RETRYABLE_CODES,
  RETRYABLE_STATUSES,
  NON_RETRYABLE_CODES,
  REFERENCE_CODES,
} from './retry.js';
export type { PaginateOptions } from './pagination.js';
export type { LedgerEntry, LedgerEntryFilters } from './resources/ledger.js';
export type { BalanceMonitor, CreateBalanceMonitorBody, DeletedBalanceMonitor } from './resources/balance-monitors.js';
export type { CreateExportBody, Export, ExportFile, ExportKind, ExportRequest } from './resources/exports.js';
export type { Resources, WriteOptions, OnBehalfOfOptions } from './resources.js';
export type * from './types.js';
export type * from './resources/remittance.js';
export type * from './resources/exchange.js';
export type * from './resources/earn.js';
export type * from './resources/cards.js';
export type * from './resources/card-money.js';
