import type { Environment } from '../db/columns.js';

/** Whose data a call reads or writes: one merchant's environment. Nothing an area answers crosses it. */
export interface MerchantScope {
  merchantId: string;
  environment: Environment;
}

/** An area call's caller: the merchant's environment, and the member when the call acts on behalf of one. */
export interface Caller extends MerchantScope {
  /** Set when acting on behalf of a member: only that member's objects are visible. */
  memberId?: string;
}

/** A call that always acts on behalf of one member. */
export interface MemberScope extends MerchantScope {
  memberId: string;
}
