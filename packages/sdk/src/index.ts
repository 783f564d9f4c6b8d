/**
 * @merchant-wallet/sdk: merchant-facing client for the Merchant Wallet API.
 */

export { MerchantWalletClient, buildQueryString } from './client.js';
export type { RequestOptions, RawResult } from './client.js';
export { SDK_VERSION } from './config.js';
export type { MerchantWalletClientOptions } from './config.js';
export { MerchantWalletError, MerchantWalletConnectionError, StepUpRequiredError, unwrapErrorBody } from './errors.js';
export type { ResponseHeaders } from './errors.js';
export { signRequest, buildSigningString, sha256Hex, isSignedMethod } from './signing.js';
export type { SignRequestInput } from './signing.js';
export { verifyWebhookSignature, signWebhook } from './webhooks.js';
export type { VerifyWebhookSignatureInput, WebhookHeaders } from './webhooks.js';
export { decideRetry, parseRetryAfter, RETRYABLE_CODES, RETRYABLE_STATUSES, NON_RETRYABLE_CODES, REFERENCE_CODES } from './retry.js';
export type { PaginateOptions } from './pagination.js';
export type { Resources, WriteOptions, OnBehalfOfOptions } from './resources.js';
export type * from './types.js';
export type * from './remittance.js';
export type * from './exchange.js';
export type * from './cards.js';
export type * from './card-money.js';
