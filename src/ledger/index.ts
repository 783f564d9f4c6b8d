/** The money core: amounts, accounts, posting, balances, verification and the events outbox. */
export { parseAmount, formatAmount, minorFromDb, scaleMax, amountMinorMax, AmountError, type AmountProblem } from './money.js';
export {
  accountSpec, accountKey, describeAccount, describeStored, refFromRow, platformAccount, baseBucket, cardBuckets, memberBuckets, merchantBuckets, platformBuckets,
  type AccountRef, type AccountSpec, type PlatformAccountRef, type SharedPlatformAccountRef, type StoredAccountRef, type MemberBucket, type CardBucket, type MerchantBucket, type PlatformBucket,
} from './accounts.js';
export { postEntry, postEntryOrRefuse, assertEntry, entryLinesMax, type EntryInput, type EntryLine } from './ledger.js';
export { postEntries, type EntryWithEvent, type PostOutcome } from './post-many.js';
export { InsufficientFundsError, DuplicatePostingError, shortfallOf, type Shortfall } from './errors.js';
export {
  entryKinds, depositLines, withdrawalLockLines, withdrawalConfirmLines, withdrawalFailLines, prepaidCreditLines, prepaidChargeLines, memberFeeToMerchant,
} from './rules.js';
export { recordEvent, eventRow, type EventInput } from './events.js';
export { eventCatalogue, eventTypes, isEventType, type EventType } from './event-types.js';
export { accountBalance, platformTotal } from './balances.js';
export { verifyLedger, problemsPerCheckMax, type LedgerReport } from './verify.js';
export type { LedgerTables, AssetType, OwnerType, Side } from './tables.js';
