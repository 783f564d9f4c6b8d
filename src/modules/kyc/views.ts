/** The KYC profile as the merchant sees it (`GET /v1/kyc/profiles/{id}`, the sandbox review's answer). */
import type { KycProfile } from './queries.js';

/** The profile as the merchant sees it: ids, status and level, never the personal data. */
export function profileSummary(p: KycProfile, kycLevel: number) {
  return { id: p.id, member_id: p.member_id, status: p.status, status_version: p.status_version, kyc_level: kycLevel };
}
