/** KYC: hosted sessions, requirements, profiles, the sandbox review. */
import type { HostedScreenTicket, KycProfileReview, KycRequirement, KycReviewBody, ListEnvelope } from '../types.js';
import { seg, key, data, type OnBehalfOfOptions, type ResourceHost, type WriteOptions } from './shared.js';

export interface KycResource {
  /** POST /v1/kyc/sessions (idempotent): the hosted KYC screen for the member's first profile. 409 `duplicate_resource`
   * when it has one. */
  createSession(opts: OnBehalfOfOptions & WriteOptions): Promise<HostedScreenTicket>;
  /** POST /v1/kyc/profile-sessions (idempotent): the pre-filled update screen. 404 `not_found` when the member has no
   * profile yet. */
  createProfileSession(opts: OnBehalfOfOptions & WriteOptions): Promise<HostedScreenTicket>;
  /** GET /v1/kyc/requirements: the `data` array (minimum level per business). */
  requirements(opts?: { onBehalfOf?: string }): Promise<KycRequirement[]>;
  /** GET /v1/kyc/profiles/{id}: the profile a `kyc.profile.*` event names (status and level, no personal data); `kyp_`
   * prefix optional. */
  getProfile(id: string, opts?: { onBehalfOf?: string }): Promise<KycProfileReview>;
  /** Sandbox: POST /v1/sandbox/kyc/{member_id}/review (idempotent): decides the member's pending review. */
  sandboxReview(memberId: string, body: KycReviewBody, opts?: WriteOptions): Promise<KycProfileReview>;
}

export function createKycResource(host: ResourceHost): KycResource {
  return {
    createSession: (opts) =>
      host.request<HostedScreenTicket>({
        method: 'POST',
        path: '/v1/kyc/sessions',
        onBehalfOf: opts.onBehalfOf,
        idempotencyKey: key(opts),
      }),
    createProfileSession: (opts) =>
      host.request<HostedScreenTicket>({
        method: 'POST',
        path: '/v1/kyc/profile-sessions',
        onBehalfOf: opts.onBehalfOf,
        idempotencyKey: key(opts),
      }),
    requirements: (opts) =>
      data(
        host.request<ListEnvelope<KycRequirement>>({
          method: 'GET',
          path: '/v1/kyc/requirements',
          onBehalfOf: opts?.onBehalfOf,
        }),
      ),
    getProfile: (id, opts) =>
      host.request<KycProfileReview>({
        method: 'GET',
        path: `/v1/kyc/profiles/${seg(id)}`,
        onBehalfOf: opts?.onBehalfOf,
      }),
    sandboxReview: (memberId, body, opts) =>
      host.request<KycProfileReview>({
        method: 'POST',
        path: `/v1/sandbox/kyc/${seg(memberId)}/review`,
        body,
        idempotencyKey: key(opts),
      }),
  };
}
