import type { CallContext, NoAnswer } from '../port.js';

/**
 * The identity-verification provider. The service sends it each submitted profile (a "check",
 * keyed by our request id: the profile id and the submission number) and reads its verdict.
 * Images never leave the service in this interface: a real adapter would fetch them through its
 * own secure channel; the check carries what the provider needs to match them.
 */
export interface KycUpstream {
  readonly name: 'kyc';
  /** Starts a check (idempotent by `requestId`): accepted with the provider's reference, or no answer. */
  submit(call: CallContext, req: KycCheckRequest): Promise<KycSubmitOutcome>;
  /** Read-only: the verdict of a check, by our request id. */
  verdict(call: CallContext, requestId: string): Promise<KycVerdictOutcome>;
  /**
   * Sandbox only, on adapters that can play the provider (the simulator): decides a check as the
   * provider's reviewer would. `POST /v1/sandbox/kyc/{member_id}/review` uses it.
   */
  sandboxDecide?(call: CallContext, requestId: string, verdict: KycDecision): Promise<boolean>;
}

export interface KycCheckRequest {
  requestId: string;
  memberRef: string;
  firstName: string;
  lastName: string;
  birthDate: string;
  nationality: string;
  documentType: string;
  documentNumber: string;
  addressCountry: string;
  /** Image references (our ids), for the provider to fetch. */
  imageRefs: string[];
}

export interface KycDecision {
  decision: 'approved' | 'rejected';
  level?: 1 | 2;
  reason?: string;
}

export type KycSubmitOutcome = { kind: 'accepted'; providerRef: string } | NoAnswer;

export type KycVerdictOutcome =
  { kind: 'pending' } | ({ kind: 'decided' } & KycDecision) | { kind: 'not_found' } | NoAnswer;
