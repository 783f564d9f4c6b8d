/**
 * The money core (issue 38): amounts, rates and conversion, accounts, posting and its rules,
 * balances, verification. Events (the catalogue and the outbox) are src/events/.
 */
export {
  parseAmount,
  formatAmount,
  formatStored,
  minorFromDb,
  readAmount,
  scaleMax,
  amountMinorMax,
  AmountError,
  type AmountProblem,
} from './amounts.js';
export {
  accountSpec,
  accountKey,
  describeAccount,
  describeStored,
  refFromRow,
  platformAccount,
  baseBucket,
  cardBuckets,
  memberBuckets,
  merchantBuckets,
  platformBuckets,
  type AccountRef,
  type AccountSpec,
  type PlatformAccountRef,
  type SharedPlatformAccountRef,
  type StoredAccountRef,
  type MemberBucket,
  type CardBucket,
  type MerchantBucket,
  type PlatformBucket,
} from './accounts.js';
export {
  postEntry,
  postEntryOrRefuse,
  postRowEntry,
  rowReference,
  assertEntry,
  entryLinesMax,
  sqlState,
  type EntryInput,
  type EntryLine,
} from './posting.js';
export { postEntries, type EntryWithEvent, type PostOutcome } from './post-many.js';
export { lockMerchantWrites } from './queries/posting.js';
export { InsufficientFundsError, DuplicatePostingError, shortfallOf, type Shortfall } from './errors.js';
export {
  entryKinds,
  depositLines,
  withdrawalLockLines,
  withdrawalConfirmLines,
  withdrawalFailLines,
  prepaidCreditLines,
  prepaidChargeLines,
  memberFeeToMerchant,
} from './rules.js';
export * from './posting-rules/index.js';
export { accountBalance, platformTotal } from './queries/balances.js';
export { convert, convertBack, rateAfterSpread, ratioOf } from './conversion.js';
export { verifyLedger, problemsPerCheckMax, type LedgerReport } from './verify.js';
export type { LedgerTables, AssetType, OwnerType, Side } from './tables.js';
